"""Pipecat: the usage metrics frames of a pipeline, recorded once per frame."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from pipecat.frames.frames import MetricsFrame
from pipecat.metrics.metrics import LLMUsageMetricsData, STTUsageMetricsData, TTSUsageMetricsData
from pipecat.observers.base_observer import BaseObserver, FramePushed

from ._pending import QueueFull
from .aio import AsyncCallmeter
from .client import Callmeter
from .providers import pipecat_provider

log = logging.getLogger("callmeter.pipecat")


class CallmeterObserver(BaseObserver):
    """
    A pipeline observer (PipelineTask(..., observers=[CallmeterObserver(...)])): each MetricsFrame's
    LLMUsageMetricsData becomes an `llm_tokens` event with its token kinds, TTSUsageMetricsData a
    `tts_characters` event and STTUsageMetricsData an `stt_minutes` one. An observer sees a frame at
    every processor it passes; it is told only of the first push, and each event's key is the
    frame's id and the metric's place in it, so a frame seen again is still one event.
    """

    def __init__(
        self,
        client: Callmeter | AsyncCallmeter,
        *,
        session_id: str,
        user_id: str,
        agent_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(observe_every_push=False, **kwargs)
        self.client = client
        self.session_id = session_id
        self.user_id = user_id
        self.agent_id = agent_id

    async def on_push_frame(self, data: FramePushed) -> None:
        if isinstance(data.frame, MetricsFrame):
            self.record_frame(data.frame)

    def record_frame(self, frame: MetricsFrame) -> list[str]:
        """Records the usage in one metrics frame; returns the event ids."""
        ids = []
        for index, metric in enumerate(frame.data):
            usage = _usage_of(metric)
            if usage is None:
                continue
            try:
                ids.append(
                    self.client.record(
                        session_id=self.session_id,
                        user_id=self.user_id,
                        agent_id=self.agent_id,
                        provider=pipecat_provider(metric.processor),
                        model=metric.model or None,
                        key=f"pipecat:{frame.id}:{frame.name}:{index}",
                        **usage,
                    )
                )
            except QueueFull:
                log.error("callmeter: usage of frame %s not recorded: the queue is full", frame.name)
        return ids


def _usage_of(metric: Any) -> dict[str, Any] | None:
    if isinstance(metric, LLMUsageMetricsData):
        tokens = metric.value
        if tokens.prompt_tokens + tokens.completion_tokens == 0:
            return None
        kinds = {
            "cached_input_tokens": tokens.cache_read_input_tokens,
            "cache_write_tokens": tokens.cache_creation_input_tokens,
            "audio_input_tokens": tokens.input_audio_tokens,
            "cached_audio_input_tokens": tokens.cache_read_input_audio_tokens,
            "audio_output_tokens": tokens.output_audio_tokens,
            "reasoning_tokens": tokens.reasoning_tokens,
        }
        return {
            "event_type": "llm_tokens",
            "quantity": tokens.prompt_tokens + tokens.completion_tokens,
            "input_tokens": tokens.prompt_tokens,
            "output_tokens": tokens.completion_tokens,
            **{name: count for name, count in kinds.items() if count},
        }
    if isinstance(metric, TTSUsageMetricsData):
        return None if metric.value <= 0 else {"event_type": "tts_characters", "quantity": metric.value}
    if isinstance(metric, STTUsageMetricsData):
        seconds = metric.value.audio_seconds
        if seconds <= 0:
            return None
        return {"event_type": "stt_minutes", "usage_data": {"audio_duration_seconds": Decimal(repr(seconds))}}
    return None
