"""
A Pipecat voice call, end to end: the pipeline of pipecat's examples/voice/voice-openai-http.py (OpenAI
speech-to-text, LLM and text-to-speech services, a context aggregator pair) with its LLM behind an LLMSwitcher
that fails over, as examples/features/features-service-switcher.py builds one; the vendors answered by a
local stub; the usage metered into the embedded callmeter. The call's total must be the exact price of
what Pipecat itself reported (its ServiceMetricsObserver's records).
"""

from __future__ import annotations

import asyncio
import time
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Any

import numpy as np
from pipecat.audio.vad.vad_analyzer import VADAnalyzer, VADParams
from pipecat.frames.frames import EndFrame, ErrorFrame, InputAudioRawFrame, LLMFullResponseEndFrame
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.observers.service_metrics_observer import ServiceMetricsObserver, ServiceUsageRecord
from pipecat.pipeline.llm_switcher import LLMSwitcher
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.service_switcher import ServiceSwitcherStrategyFailover
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair, LLMUserAggregatorParams
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.stt import OpenAISTTService
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.services.openrouter.llm import OpenRouterLLMService
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from callmeter import AsyncCallmeter
from callmeter.pipecat import CallmeterObserver
from openai_stub import OpenAIStub

USER = "tenant-pipecat-call"
SAMPLE_RATE = 16000
FRAME = SAMPLE_RATE // 100  # 10 ms of audio

# The usage each LLM reports, as OpenAI-compatible APIs report it (cached tokens inside prompt_tokens;
# OpenRouter also reports cache writes). The primary serves the first turn and refuses the second (its key
# revoked), so the switcher fails over and the fallback serves the third.
PRIMARY = [
    {
        "prompt_tokens": 1400,
        "completion_tokens": 42,
        "total_tokens": 1442,
        "prompt_tokens_details": {"cached_tokens": 1024},
    },
    401,
]
FALLBACK = [
    {
        "prompt_tokens": 1650,
        "completion_tokens": 90,
        "total_tokens": 1740,
        "prompt_tokens_details": {"cached_tokens": 1024, "cache_write_tokens": 512},
        "completion_tokens_details": {"reasoning_tokens": 48},
    }
]

# List prices (USD) of what the call used, as callmeter's catalogs hold them: the LLMs from genai-prices
# 0.1.8, speech from infra/rate-card/speech-catalog.json. Tokens per million.
MILLION = Decimal(1_000_000)
PRICES: dict[tuple[str, str], dict[str, Decimal]] = {
    ("openai", "gpt-4o-mini"): {"input": Decimal("0.15"), "cache_read": Decimal("0.075"), "output": Decimal("0.6")},
    ("openrouter", "anthropic/claude-sonnet-4"): {
        "input": Decimal(3),
        "cache_read": Decimal("0.3"),
        "cache_write": Decimal("3.75"),
        "output": Decimal(15),
    },
    ("openai", "whisper-1"): {"minute": Decimal("0.006")},
    ("openai", "tts-1"): {"character": Decimal(15) / MILLION},
}
PROVIDERS = {
    "OpenAILLMService": "openai",
    "OpenRouterLLMService": "openrouter",
    "OpenAISTTService": "openai",
    "OpenAITTSService": "openai",
}


class LevelVADAnalyzer(VADAnalyzer):
    """Speech wherever the audio is not silent: stands in for SileroVADAnalyzer, which needs a human voice."""

    def num_frames_required(self) -> int:
        return FRAME

    def voice_confidence(self, buffer: bytes) -> float:
        return 1.0 if any(buffer) else 0.0


class Answers(BaseObserver):
    """
    The end of each of the bot's answers (its TTS passed the response's end on; an LLM that failed ends its
    response too): "failed" when the LLM reported an error on the way, else "answered".
    """

    def __init__(self, tts: OpenAITTSService, llms: list[Any]) -> None:
        super().__init__()
        self.tts, self.llms = tts, llms
        self.failed = False
        self.outcomes: asyncio.Queue[str] = asyncio.Queue()

    async def on_push_frame(self, data: FramePushed) -> None:
        if isinstance(data.frame, ErrorFrame) and data.first_push and data.frame.processor in self.llms:
            self.failed = True
        elif isinstance(data.frame, LLMFullResponseEndFrame) and data.source is self.tts:
            self.outcomes.put_nowait("failed" if self.failed else "answered")
            self.failed = False


def a_sentence() -> list[InputAudioRawFrame]:
    """What the caller says: 1.2 s of a tone, then 0.6 s of silence."""
    tone = (np.sin(np.arange(FRAME) * 2 * np.pi * 220 / SAMPLE_RATE) * 8000).astype(np.int16).tobytes()
    chunks = [tone] * 120 + [bytes(FRAME * 2)] * 60
    return [InputAudioRawFrame(audio=chunk, sample_rate=SAMPLE_RATE, num_channels=1) for chunk in chunks]


def stored(value: Decimal) -> Decimal:
    """Rounded to the 18 decimals callmeter stores quantities and costs in, half to even."""
    return value.quantize(Decimal(1).scaleb(-18), rounding=ROUND_HALF_EVEN)


def list_price(record: ServiceUsageRecord) -> Decimal:
    """The price of one piece of work Pipecat reported, from the list prices, as the store keeps it."""
    prices = PRICES[(PROVIDERS[record.processor.split("#")[0]], record.model or "")]
    if record.kind == "stt":
        return stored(stored(Decimal(repr(record.audio_seconds)) / 60) * prices["minute"])
    if record.kind == "tts":
        return stored(record.characters * prices["character"])
    read, write = record.cache_read_input_tokens or 0, record.cache_creation_input_tokens or 0
    fresh = record.prompt_tokens - read - write
    tokens = (
        fresh * prices["input"]
        + read * prices["cache_read"]
        + write * prices.get("cache_write", prices["input"])
        + record.completion_tokens * prices["output"]
    )
    return stored(tokens / MILLION)


async def run_call(stub: OpenAIStub, client: AsyncCallmeter, session_id: str) -> list[ServiceUsageRecord]:
    """Three turns of the caller; returns what Pipecat reported as usage."""
    stt = OpenAISTTService(
        api_key="stub-key", base_url=stub.base_url("openai"), settings=OpenAISTTService.Settings(model="whisper-1")
    )
    tts = OpenAITTSService(
        api_key="stub-key",
        base_url=stub.base_url("openai"),
        settings=OpenAITTSService.Settings(model="tts-1", voice="ballad"),
    )
    instruction = "You are a weather line. Answer in one or two short sentences."
    primary = OpenAILLMService(
        api_key="revoked-soon",
        base_url=stub.base_url("openai"),
        settings=OpenAILLMService.Settings(model="gpt-4o-mini", system_instruction=instruction),
    )
    fallback = OpenRouterLLMService(
        api_key="stub-key",
        base_url=stub.base_url("openrouter"),
        settings=OpenRouterLLMService.Settings(model="anthropic/claude-sonnet-4", system_instruction=instruction),
    )
    llm = LLMSwitcher(llms=[primary, fallback], strategy_type=ServiceSwitcherStrategyFailover)
    user_aggregator, assistant_aggregator = LLMContextAggregatorPair(
        LLMContext(),
        user_params=LLMUserAggregatorParams(
            vad_analyzer=LevelVADAnalyzer(params=VADParams(min_volume=0.0)),
            user_turn_strategies=UserTurnStrategies(stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.2)]),
        ),
    )
    reported: list[ServiceUsageRecord] = []
    service_metrics = ServiceMetricsObserver()
    service_metrics.add_event_handler("on_service_usage", lambda _, record: reported.append(record))
    meter = CallmeterObserver(client, session_id=session_id, user_id=USER, service_metrics=service_metrics)
    answers = Answers(tts, [primary, fallback])
    worker = PipelineWorker(
        Pipeline([stt, user_aggregator, llm, tts, assistant_aggregator]),
        params=PipelineParams(audio_out_sample_rate=24000, enable_metrics=True, enable_usage_metrics=True),
        observers=[meter, service_metrics, answers],
    )
    started = asyncio.Event()
    worker.add_event_handler("on_pipeline_started", lambda *_: started.set())
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    running = asyncio.create_task(runner.run())
    await asyncio.wait_for(started.wait(), 30)
    outcomes = []
    for _ in range(3):
        await worker.queue_frames(a_sentence())
        outcomes.append(await asyncio.wait_for(answers.outcomes.get(), 60))
    await worker.queue_frame(EndFrame())
    await asyncio.wait_for(running, 60)
    assert outcomes == ["answered", "failed", "answered"]
    return reported


def breakdown_once_stored(callmeter: Any, session_id: str, events: int) -> dict[str, Any]:
    """The call's cost breakdown once it holds `events` events (the writer stores a batch shortly after taking it)."""
    deadline = time.monotonic() + 30
    while True:
        answer = callmeter.get(f"/api/sessions/{session_id}/cost-breakdown")
        if answer["event_count"] >= events or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


async def test_a_pipecat_calls_total_is_the_exact_price_of_the_usage_pipecat_reported(callmeter):
    stub = OpenAIStub(
        {"openai": PRIMARY, "openrouter": FALLBACK},
        answer="Sunny and warm. About 24 degrees.",
        transcript="What is the weather like?",
    )
    await stub.start()
    try:
        async with AsyncCallmeter(callmeter.url, flush_interval=0.2) as client:
            call = await client.start_session("pipecat-call-1", USER, "weather-bot")
            reported = await run_call(stub, client, call["id"])
            await client.flush()
            await client.end_session(call["id"])
    finally:
        await stub.stop()

    # What Pipecat reported: every turn's speech, both answered turns' LLM usage (the model that served
    # each, not the switcher), and their speech out.
    kinds = [(record.kind.value, record.processor.split("#")[0], record.model) for record in reported]
    assert kinds.count(("stt", "OpenAISTTService", "whisper-1")) == 3
    assert [kind for kind in kinds if kind[0] == "llm"] == [
        ("llm", "OpenAILLMService", "gpt-4o-mini"),
        ("llm", "OpenRouterLLMService", "anthropic/claude-sonnet-4"),
    ]
    assert kinds.count(("tts", "OpenAITTSService", "tts-1")) >= 2

    with localcontext() as exact:
        exact.prec = 60
        expected = sum((list_price(record) for record in reported), Decimal(0))
    breakdown = breakdown_once_stored(callmeter, call["id"], len(reported))
    assert breakdown["event_count"] == len(reported)
    assert Decimal(breakdown["total_cost"]) == expected
    assert {event["cost_source"] for event in breakdown["events"]} == {"computed"}
    # The fallback's cache reads and writes are priced apart; its reasoning tokens (sent as reasoning_tokens)
    # are part of its output, which is how the catalog prices them for this model.
    fallback_event = next(event for event in breakdown["events"] if event["model"] == "anthropic/claude-sonnet-4")
    assert {part["dimension"]: part["quantity"] for part in fallback_event["components"]} == {
        "input_tokens": "114",
        "cached_input_tokens": "1024",
        "cache_write_tokens": "512",
        "output_tokens": "90",
    }
