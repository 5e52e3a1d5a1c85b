"""The Pipecat observer in a real pipeline, with pipecat-ai's own frames, metrics and ServiceMetricsObserver."""

from __future__ import annotations

from typing import Any

from pipecat.frames.frames import EndFrame, Frame, MetricsFrame
from pipecat.metrics.metrics import (
    LLMTokenUsage,
    LLMUsageMetricsData,
    STTUsage,
    STTUsageMetricsData,
    TTFBMetricsData,
    TTSUsageMetricsData,
)
from pipecat.observers.base_observer import BaseObserver
from pipecat.observers.service_metrics_observer import ServiceMetricsObserver, ServiceUsageRecord
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

from callmeter import AsyncCallmeter, event_id_for
from callmeter.pipecat import CallmeterObserver

SESSION = "00000000-0000-4000-8000-000000000001"
IDENTITY = ("event_id", "session_id", "user_id", "agent_id", "timestamp")


class PassThrough(FrameProcessor):
    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)


def llm(processor: str = "OpenAILLMService#0", model: str = "gpt-4o-mini", **tokens: int) -> LLMUsageMetricsData:
    counts = {"prompt_tokens": 500, "completion_tokens": 40, **tokens}
    counts.setdefault("total_tokens", counts["prompt_tokens"] + counts["completion_tokens"])
    return LLMUsageMetricsData(processor=processor, model=model, value=LLMTokenUsage(**counts))


def tts(characters: int = 88) -> TTSUsageMetricsData:
    return TTSUsageMetricsData(processor="CartesiaTTSService#0", model="sonic-3", value=characters)


def stt(seconds: float = 4.25) -> STTUsageMetricsData:
    return STTUsageMetricsData(processor="DeepgramSTTService#0", model="nova-3", value=STTUsage(audio_seconds=seconds))


def a_call() -> list[MetricsFrame]:
    """A call's metrics frames: two turns, the second one's speech usage the same as the first's."""
    latency = TTFBMetricsData(processor="OpenAILLMService#0", value=0.3)
    return [
        MetricsFrame(data=[stt()]),
        MetricsFrame(data=[llm(cache_read_input_tokens=128), latency]),
        MetricsFrame(data=[tts()]),
        MetricsFrame(data=[stt()]),
        MetricsFrame(data=[llm(prompt_tokens=620, completion_tokens=35, cache_read_input_tokens=512)]),
        MetricsFrame(data=[tts()]),
    ]


SPEECH_IN = {
    "provider": "deepgram",
    "event_type": "stt_minutes",
    "model": "nova-3",
    "usage_data": {"audio_duration_seconds": "4.25"},
}
A_CALLS_EVENTS = [
    SPEECH_IN,
    {
        "provider": "openai",
        "event_type": "llm_tokens",
        "model": "gpt-4o-mini",
        "quantity": 540,
        "input_tokens": 500,
        "output_tokens": 40,
        "cached_input_tokens": 128,
    },
    {"provider": "cartesia", "event_type": "tts_characters", "model": "sonic-3", "quantity": 88},
    SPEECH_IN,
    {
        "provider": "openai",
        "event_type": "llm_tokens",
        "model": "gpt-4o-mini",
        "quantity": 655,
        "input_tokens": 620,
        "output_tokens": 35,
        "cached_input_tokens": 512,
    },
    {"provider": "cartesia", "event_type": "tts_characters", "model": "sonic-3", "quantity": 88},
]


async def run_pipeline(frames: list[Frame], observers: list[BaseObserver]) -> None:
    """The frames through three processors (each pushes every frame again) to the pipeline's end."""
    worker = PipelineWorker(Pipeline([PassThrough(), PassThrough(), PassThrough()]), observers=observers)
    await worker.queue_frames([*frames, EndFrame()])
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    await runner.run()


def sent(server: Any) -> list[dict[str, Any]]:
    """Every body the client sent, resends included, less its ids and time."""
    return [{k: v for k, v in body.items() if k not in IDENTITY} for batch in server.batches for body in batch]


def by_text(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(bodies, key=str)


async def test_a_pipelines_usage_frames_are_recorded_once_though_every_processor_pushes_them(server):
    async with AsyncCallmeter(server.url, flush_interval=60) as client:
        observer = CallmeterObserver(client, session_id=SESSION, user_id="user-1", agent_id="agent-1")
        frames = a_call()
        await run_pipeline(frames, [observer])
        # The same frame handed to the observer again is the same event, and is not sent twice.
        ids = observer.record_frame(frames[1])
    assert by_text(sent(server)) == by_text(A_CALLS_EVENTS)
    assert len(server.stored) == 6
    assert ids == [next(i for i, b in server.stored.items() if b.get("quantity") == 540)]
    assert all(body["session_id"] == SESSION and body["agent_id"] == "agent-1" for body in server.stored.values())


async def test_the_service_metrics_observers_records_and_the_frames_count_each_piece_of_work_once(server):
    async with AsyncCallmeter(server.url, flush_interval=60) as client:
        service_metrics = ServiceMetricsObserver()
        records: list[ServiceUsageRecord] = []
        service_metrics.add_event_handler("on_service_usage", lambda _, record: records.append(record))
        observer = CallmeterObserver(client, session_id=SESSION, user_id="user-1", service_metrics=service_metrics)
        await run_pipeline(a_call(), [observer, service_metrics])
        # Pipecat's own report: six pieces of work, two of them alike twice over.
        assert len(records) == 6
        # A record handed in again is the event it was.
        again = observer.record_usage(records[0], source=service_metrics)
    assert by_text(sent(server)) == by_text(A_CALLS_EVENTS)
    assert again in server.stored


async def test_each_source_alone_and_a_replay_of_the_call_give_the_same_event_ids(server):
    async with AsyncCallmeter(server.url, flush_interval=60) as client:
        frames_only = CallmeterObserver(client, session_id=SESSION, user_id="user-1")
        await run_pipeline(a_call(), [frames_only])
        await client.flush()
        after_frames = set(server.stored)
        # The same call replayed (new frames, new processes' observers) through the records alone.
        service_metrics = ServiceMetricsObserver()
        CallmeterObserver(client, session_id=SESSION, user_id="user-1", service_metrics=service_metrics)
        await run_pipeline(a_call(), [service_metrics])
        await client.flush()
    assert len(after_frames) == 6
    assert set(server.stored) == after_frames
    # Sent twice, the second time answered as duplicates: counted once.
    assert by_text(sent(server)) == by_text(A_CALLS_EVENTS * 2)


def test_a_source_that_started_late_adds_no_event_of_its_own():
    keys: list[str] = []

    class Recorder:
        def record(self, **fields: Any) -> str:
            keys.append(fields["key"])
            return event_id_for(fields["user_id"], fields["key"])

    observer = CallmeterObserver(Recorder(), session_id=SESSION, user_id="user-1")  # type: ignore[arg-type]
    for _ in range(3):
        observer.record_frame(MetricsFrame(data=[tts()]))
    # The records of the last two of the three, as a ServiceMetricsObserver added mid-call reports them.
    late = ServiceMetricsObserver()
    for when in (2.0, 3.0):
        record = ServiceUsageRecord(kind="tts", processor="CartesiaTTSService#0", model="sonic-3", timestamp=when)
        observer.record_usage(record.model_copy(update={"characters": 88}), source=late)
    assert len(keys) == 3
    assert len(set(keys)) == 3


async def test_llm_token_kinds_cache_reads_writes_and_reasoning_are_sent_as_the_server_names_them(server):
    async with AsyncCallmeter(server.url, flush_interval=60) as client:
        observer = CallmeterObserver(client, session_id=SESSION, user_id="user-1")
        frame = MetricsFrame(
            data=[
                # OpenAI-compatible: prompt_tokens gross of the cache (OpenRouter reports cache writes too).
                llm(
                    "OpenRouterLLMService#0",
                    "anthropic/claude-sonnet-4",
                    prompt_tokens=3000,
                    completion_tokens=300,
                    cache_read_input_tokens=1024,
                    cache_creation_input_tokens=900,
                    reasoning_tokens=120,
                ),
                # Anthropic: prompt_tokens net of the cache, total_tokens gross (Pipecat's LLMTokenUsage).
                llm(
                    "AnthropicLLMService#0",
                    "claude-sonnet-4-20250514",
                    prompt_tokens=40,
                    completion_tokens=200,
                    total_tokens=40 + 200 + 2048 + 512,
                    cache_read_input_tokens=2048,
                    cache_creation_input_tokens=512,
                    reasoning_tokens=150,
                ),
                # A realtime model's audio tokens.
                llm(
                    "OpenAIRealtimeLLMService#0",
                    "gpt-realtime",
                    prompt_tokens=900,
                    completion_tokens=400,
                    cache_read_input_tokens=300,
                    input_audio_tokens=700,
                    cache_read_input_audio_tokens=200,
                    output_audio_tokens=350,
                ),
                llm(prompt_tokens=0, completion_tokens=0),
            ]
        )
        await run_pipeline([frame], [observer])
    assert by_text(sent(server)) == by_text(
        [
            {
                "provider": "openrouter",
                "event_type": "llm_tokens",
                "model": "anthropic/claude-sonnet-4",
                "quantity": 3300,
                "input_tokens": 3000,
                "output_tokens": 300,
                "cached_input_tokens": 1024,
                "cache_write_tokens": 900,
                "reasoning_tokens": 120,
            },
            {
                "provider": "anthropic",
                "event_type": "llm_tokens",
                "model": "claude-sonnet-4-20250514",
                "quantity": 2800,
                "input_tokens": 2600,
                "output_tokens": 200,
                "cached_input_tokens": 2048,
                "cache_write_tokens": 512,
                "reasoning_tokens": 150,
            },
            {
                "provider": "openai",
                "event_type": "llm_tokens",
                "model": "gpt-realtime",
                "quantity": 1300,
                "input_tokens": 900,
                "output_tokens": 400,
                "cached_input_tokens": 300,
                "audio_input_tokens": 700,
                "cached_audio_input_tokens": 200,
                "audio_output_tokens": 350,
            },
        ]
    )
