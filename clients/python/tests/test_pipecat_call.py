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
from pipecat.frames.frames import EndFrame, ErrorFrame, InputAudioRawFrame, LLMFullResponseEndFrame, TTSSpeakFrame
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


def voice_pipeline(
    stub: OpenAIStub, client: AsyncCallmeter, session_id: str, user_id: str = USER, **meter_options: Any
) -> tuple[PipelineWorker, Answers, list[ServiceUsageRecord]]:
    """The example's pipeline, metered by a CallmeterObserver (given meter_options); and what Pipecat reported."""
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
    meter = CallmeterObserver(
        client, session_id=session_id, user_id=user_id, service_metrics=service_metrics, **meter_options
    )
    answers = Answers(tts, [primary, fallback])
    worker = PipelineWorker(
        Pipeline([stt, user_aggregator, llm, tts, assistant_aggregator]),
        params=PipelineParams(audio_out_sample_rate=24000, enable_metrics=True, enable_usage_metrics=True),
        observers=[meter, service_metrics, answers],
    )
    return worker, answers, reported


async def started(worker: PipelineWorker) -> asyncio.Task[None]:
    """Runs the pipeline; returns its run once it started."""
    ready = asyncio.Event()
    worker.add_event_handler("on_pipeline_started", lambda *_: ready.set())
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    running = asyncio.create_task(runner.run())
    await asyncio.wait_for(ready.wait(), 30)
    return running


async def run_call(stub: OpenAIStub, client: AsyncCallmeter, session_id: str) -> list[ServiceUsageRecord]:
    """Three turns of the caller; returns what Pipecat reported as usage."""
    worker, answers, reported = voice_pipeline(stub, client, session_id)
    running = await started(worker)
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


# The per-call caps: a tenant of its own, an agent per test (a cap covers one agent's calls).
CAP_USER = "tenant-pipecat-cap"
ANSWERED = {
    "prompt_tokens": 1400,
    "completion_tokens": 42,
    "total_tokens": 1442,
    "prompt_tokens_details": {"cached_tokens": 1024},
}
GOODBYE = "This call has reached its limit. Goodbye."


def per_call_cap(callmeter: Any, agent_id: str, amount: str) -> str:
    """A per-call cap on every call of the agent; returns its budget id."""
    cap = {"name": f"{agent_id} per call", "user_id": CAP_USER, "agent_id": agent_id, "per_call": True}
    return callmeter.post("/api/budgets", {**cap, "period": "none", "amount": amount})["id"]


async def talk_until_hung_up(
    worker: PipelineWorker, answers: Answers, running: asyncio.Task[None], hung_up: list[Any], turns: int
) -> int:
    """Speaks up to `turns` sentences, each answered before the next, until the call hangs up; returns the answered."""
    answered = 0
    for _ in range(turns):
        if running.done() or hung_up:
            break
        await worker.queue_frames(a_sentence())
        outcome = asyncio.ensure_future(answers.outcomes.get())
        done, _ = await asyncio.wait({outcome, running}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        assert done, "neither an answer nor the end of the call within 60 s"
        if outcome in done:
            answered += 1
        else:
            outcome.cancel()
    return answered


def subset_sums(values: list[Decimal]) -> set[Decimal]:
    sums = {Decimal(0)}
    for value in values:
        sums |= {total + value for total in sums}
    return sums


async def test_a_pipeline_whose_call_passes_its_per_call_cap_is_told_once_and_hangs_up(callmeter):
    budget_id = per_call_cap(callmeter, "capped-bot", "0.001")
    stub = OpenAIStub({"openai": [ANSWERED] * 6}, answer="Sunny and warm. About 24 degrees.", transcript="Weather?")
    await stub.start()
    standings: list[Any] = []
    pipeline: list[PipelineWorker] = []

    async def hang_up(standing: Any) -> None:
        standings.append(standing)
        await pipeline[0].queue_frames([TTSSpeakFrame(GOODBYE), EndFrame()])

    try:
        async with AsyncCallmeter(callmeter.url, flush_interval=0.2, cap_check_interval=0.5) as client:
            call = await client.start_session("pipecat-cap-1", CAP_USER, "capped-bot")
            worker, answers, reported = voice_pipeline(stub, client, call["id"], CAP_USER, on_cap_reached=hang_up)
            pipeline.append(worker)
            running = await started(worker)
            answered = await talk_until_hung_up(worker, answers, running, standings, turns=6)
            # The hang-up ends the pipeline: the test never sends an EndFrame of its own.
            await asyncio.wait_for(running, 60)
            await client.flush()
            checks = client.stats()["cap_checks"]
            final = await client.session_budget(call["id"])
            await client.end_session(call["id"])
    finally:
        await stub.stop()

    assert len(standings) == 1
    standing = standings[0]
    assert (standing.session_id, standing.allowed, standing.cap, standing.remaining, standing.budget_id) == (
        call["id"], False, Decimal("0.001"), Decimal(0), budget_id,
    )
    assert isinstance(standing.spent, Decimal) and standing.spent >= standing.cap
    assert answered < 6
    assert ("openai", "speech", GOODBYE) in [(v, kind, body.get("input")) for v, kind, body in stub.requests]
    assert checks >= 1
    # The spend the callback was given is the exact cost of the call's usage stored when it was read; the call's
    # standing afterwards is its whole stored cost.
    breakdown = breakdown_once_stored(callmeter, call["id"], len(reported))
    assert breakdown["event_count"] == len(reported)
    assert standing.spent in subset_sums([Decimal(event["total_cost"]) for event in breakdown["events"]])
    assert (final.allowed, final.spent) == (False, Decimal(breakdown["total_cost"]))


async def test_a_call_under_its_per_call_cap_is_never_told(callmeter):
    per_call_cap(callmeter, "roomy-bot", "1.00")
    stub = OpenAIStub({"openai": [ANSWERED] * 3}, answer="Sunny and warm. About 24 degrees.", transcript="Weather?")
    await stub.start()
    standings: list[Any] = []
    try:
        async with AsyncCallmeter(callmeter.url, flush_interval=0.2, cap_check_interval=0.5) as client:
            call = await client.start_session("pipecat-cap-2", CAP_USER, "roomy-bot")
            options = {"on_cap_reached": standings.append}
            worker, answers, reported = voice_pipeline(stub, client, call["id"], CAP_USER, **options)
            running = await started(worker)
            answered = await talk_until_hung_up(worker, answers, running, standings, turns=3)
            await client.flush()
            # The last usage's standing is read after it settled (the watch's SETTLE_S), then the call ends.
            await asyncio.sleep(3)
            await worker.queue_frame(EndFrame())
            await asyncio.wait_for(running, 60)
            checks = client.stats()["cap_checks"]
            final = await client.session_budget(call["id"])
    finally:
        await stub.stop()

    assert answered == 3
    assert standings == []
    assert checks >= 2  # it was watched: read after the usage was sent, and again once it was stored
    breakdown = breakdown_once_stored(callmeter, call["id"], len(reported))
    assert (final.allowed, final.cap, final.spent) == (True, Decimal("1.00"), Decimal(breakdown["total_cost"]))
    assert final.remaining == Decimal("1.00") - final.spent
