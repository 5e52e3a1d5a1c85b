"""The Pipecat observer in a real pipeline, with pipecat-ai's own frames and metrics."""

from __future__ import annotations

from pipecat.frames.frames import EndFrame, MetricsFrame
from pipecat.metrics.metrics import (
    LLMTokenUsage,
    LLMUsageMetricsData,
    STTUsage,
    STTUsageMetricsData,
    TTFBMetricsData,
    TTSUsageMetricsData,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineTask
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from callmeter import AsyncCallmeter
from callmeter.pipecat import CallmeterObserver

SESSION = "00000000-0000-4000-8000-000000000001"


class PassThrough(FrameProcessor):
    async def process_frame(self, frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)


def usage_frame() -> MetricsFrame:
    return MetricsFrame(
        data=[
            LLMUsageMetricsData(
                processor="OpenAILLMService#0",
                model="gpt-4o-mini",
                value=LLMTokenUsage(
                    prompt_tokens=500, completion_tokens=40, total_tokens=540, cache_read_input_tokens=128
                ),
            ),
            TTFBMetricsData(processor="OpenAILLMService#0", model="gpt-4o-mini", value=0.3),
            TTSUsageMetricsData(processor="CartesiaTTSService#0", model="sonic-3", value=88),
            STTUsageMetricsData(
                processor="DeepgramSTTService#0", model="nova-3", value=STTUsage(audio_seconds=4.25)
            ),
        ]
    )


async def test_a_pipelines_usage_frames_are_recorded_once_though_every_processor_pushes_them(server):
    async with AsyncCallmeter(server.url, flush_interval=60) as client:
        observer = CallmeterObserver(client, session_id=SESSION, user_id="user-1", agent_id="agent-1")
        task = PipelineTask(Pipeline([PassThrough(), PassThrough(), PassThrough()]), observers=[observer])
        frame = usage_frame()
        await task.queue_frames([frame, EndFrame()])
        await PipelineRunner(handle_sigint=False).run(task)
        # The same frame handed to the observer again is still one event per metric.
        observer.record_frame(frame)
    bodies = [body for batch in server.batches for body in batch]
    strip = ("event_id", "session_id", "user_id", "agent_id", "timestamp")
    assert len(server.stored) == 3
    assert sorted(({k: v for k, v in b.items() if k not in strip} for b in server.stored.values()), key=str) == sorted(
        [
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
            {
                "provider": "deepgram",
                "event_type": "stt_minutes",
                "model": "nova-3",
                "usage_data": {"audio_duration_seconds": "4.25"},
            },
        ],
        key=str,
    )
    assert len(bodies) == 6  # the second handing is sent, and answered as duplicates
