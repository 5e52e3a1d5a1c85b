"""
A voice agent as LiveKit's own example builds it (examples/voice_agents/basic_agent.py in livekit/agents):
an AgentSession of the framework's `inference.STT("deepgram/nova-3")`, `inference.LLM(...)` and
`inference.TTS("cartesia/sonic-3")`, here with the LLM behind a real `llm.FallbackAdapter` whose first
model is down, all talking to the gateway stub (livekit_gateway.py). The room's audio is replaced by an
input the test speaks into and an output that plays instantly, as a console session does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from livekit import rtc
from livekit.agents import Agent, AgentSession, inference, llm, utils
from livekit.agents.voice.io import AudioInput, AudioOutput, AudioOutputCapabilities

from livekit_gateway import API_KEY, API_SECRET

# 2**14 Hz: the STT's 50 ms chunks are then 819 samples, 819/16384 s, which a float adds up exactly and
# which is a whole number of 10**-18 minutes, so LiveKit's audio totals price exactly per minute.
SAMPLE_RATE = 16384
PRIMARY, BACKUP = "openai/gpt-4.1-mini", "openai/gpt-4o-mini"


class SpokenInput(AudioInput):
    """The caller's microphone: the test pushes utterances of silence."""

    def __init__(self) -> None:
        super().__init__(label="callmeter-test")
        self._frames = utils.aio.Chan[rtc.AudioFrame]()

    async def __anext__(self) -> rtc.AudioFrame:
        return await self._frames.__anext__()

    def speak(self, chunks: int, samples: int = SAMPLE_RATE // 20) -> None:
        for _ in range(chunks):
            frame = rtc.AudioFrame(
                data=b"\x00\x00" * samples, sample_rate=SAMPLE_RATE, num_channels=1, samples_per_channel=samples
            )
            self._frames.send_nowait(frame)


class InstantOutput(AudioOutput):
    """The caller's speaker: every segment plays out as soon as it is flushed."""

    def __init__(self) -> None:
        super().__init__(label="callmeter-test", capabilities=AudioOutputCapabilities(pause=False))
        self._pushed = 0.0

    async def capture_frame(self, frame: rtc.AudioFrame) -> None:
        await super().capture_frame(frame)
        if self._pushed == 0.0:
            self.on_playback_started(created_at=0.0)
        self._pushed += frame.duration

    def flush(self) -> None:
        super().flush()
        pushed, self._pushed = self._pushed, 0.0
        if pushed:
            asyncio.get_running_loop().call_soon(
                lambda: self.on_playback_finished(playback_position=pushed, interrupted=False)
            )

    def clear_buffer(self) -> None:
        pushed, self._pushed = self._pushed, 0.0
        if pushed:
            self.on_playback_finished(playback_position=pushed, interrupted=True)


def fallback_llm(gateway_url: str) -> llm.FallbackAdapter:
    """Two real LiveKit Inference LLMs behind LiveKit's FallbackAdapter: the first one fails."""
    models = [
        inference.LLM(model, base_url=gateway_url, api_key=API_KEY, api_secret=API_SECRET) for model in (PRIMARY, BACKUP)
    ]
    return llm.FallbackAdapter(models, attempt_timeout=10.0, retry_interval=0.1)


def voice_session(gateway_url: str) -> tuple[AgentSession, SpokenInput]:
    """The example's session, on the gateway stub, with the test's audio in and out."""
    credentials: dict[str, Any] = {"base_url": gateway_url, "api_key": API_KEY, "api_secret": API_SECRET}
    session: AgentSession = AgentSession(
        stt=inference.STT("deepgram/nova-3", language="en", sample_rate=SAMPLE_RATE, **credentials),
        llm=fallback_llm(gateway_url),
        tts=inference.TTS("cartesia/sonic-3", voice="9626c31c-bec5-4cca-baa8-f8ba9e84c8bc", **credentials),
        turn_handling={"turn_detection": "stt"},
        aec_warmup_duration=None,
    )
    spoken = SpokenInput()
    session.input.audio = spoken
    session.output.audio = InstantOutput()
    return session, spoken


class Assistant(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="You are a helpful voice assistant. Keep your answers short.")


async def run_call(session: AgentSession, spoken: SpokenInput, turns: int, timeout: float = 30.0) -> None:
    """Starts the session, speaks `turns` utterances (each answered before the next), and closes it."""
    replies: asyncio.Queue[None] = asyncio.Queue()

    def on_state(event: Any) -> None:
        if event.old_state == "speaking" and event.new_state == "listening":
            replies.put_nowait(None)

    session.on("agent_state_changed", on_state)
    # A worker's job opens the plugins' HTTP context; a session run on its own opens it itself.
    async with utils.http_context.open():
        await session.start(Assistant())
        for _ in range(turns):
            spoken.speak(24)
            await asyncio.wait_for(replies.get(), timeout)
        await session.aclose()
