"""Pipecat: the usage a pipeline's services report, recorded once per piece of work."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pipecat.frames.frames import CancelFrame, EndFrame, MetricsFrame
from pipecat.metrics.metrics import LLMUsageMetricsData, MetricsData, STTUsageMetricsData, TTSUsageMetricsData
from pipecat.observers.base_observer import BaseObserver, FramePushed

from ._caps import CapCallback, watch_cap
from ._pending import QueueFull
from ._records import event_id_for
from .aio import AsyncCallmeter
from .client import Callmeter
from .providers import pipecat_provider

if TYPE_CHECKING:  # newer than the frames: named for types only, so earlier pipecat-ai releases still import this
    from pipecat.observers.service_metrics_observer import ServiceMetricsObserver, ServiceUsageRecord

log = logging.getLogger("callmeter.pipecat")

# LLMTokenUsage's counts, which ServiceUsageRecord repeats under the same names.
TOKEN_FIELDS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "reasoning_tokens",
    "input_audio_tokens",
    "output_audio_tokens",
    "cache_read_input_audio_tokens",
)


@dataclass(frozen=True)
class WorkUsage:
    """What one piece of work consumed, as a MetricsFrame's metric or a ServiceUsageRecord reports it."""

    kind: str  # "llm", "stt" or "tts", as ServiceUsageKind names them
    processor: str
    model: str | None
    counts: dict[str, Any]
    timestamp: float

    def identity(self) -> str:
        """Everything but the time: the same for the same usage whichever source reported it."""
        return json.dumps([self.kind, self.processor, self.model, self.counts], sort_keys=True)


class CallmeterObserver(BaseObserver):
    """
    Records what a pipeline's services consumed: as a pipeline observer
    (PipelineWorker(..., observers=[CallmeterObserver(...)])) from the usage metrics in each MetricsFrame,
    and from a ServiceMetricsObserver's usage records (`service_metrics=` or attach()). Either source,
    or both at once, records each piece of work once: an LLM usage as `llm_tokens` with its token kinds,
    an STT one as `stt_minutes` (its audio seconds), a TTS one as `tts_characters`, named by the
    service that did the work (provider from its class, model as Pipecat reports it).

    A piece of work's key is its session, its usage less the time (kind, processor, model, counts) and
    which occurrence of that same usage it is (WorkKeys), so both sources, a frame or record handed in
    again, and the same call replayed all give the same event id.

    With on_cap_reached, the call's standing is watched once its usage is sent (Callmeter.watch_cap) until
    an EndFrame or CancelFrame passes, and on_cap_reached(standing) runs once, on the pipeline's event
    loop, when the call reached its per-call cap: the place to say goodbye and end or cancel the pipeline.
    """

    def __init__(
        self,
        client: Callmeter | AsyncCallmeter,
        *,
        session_id: str,
        user_id: str,
        agent_id: str | None = None,
        service_metrics: ServiceMetricsObserver | None = None,
        on_cap_reached: CapCallback | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(observe_every_push=False, **kwargs)
        self.client = client
        self.session_id = session_id
        self.user_id = user_id
        self.agent_id = agent_id
        self.on_cap_reached = on_cap_reached
        self._cap_watched = False
        self._ended = False
        self._keys = WorkKeys(session_id)
        self._recorded: set[str] = set()
        if service_metrics is not None:
            self.attach(service_metrics)

    def attach(self, service_metrics: ServiceMetricsObserver) -> None:
        """Records the usage records of a ServiceMetricsObserver in the pipeline (its on_service_usage event)."""

        async def on_service_usage(observer: ServiceMetricsObserver, record: ServiceUsageRecord) -> None:
            self.record_usage(record, source=observer)

        service_metrics.add_event_handler("on_service_usage", on_service_usage)

    async def on_push_frame(self, data: FramePushed) -> None:
        if isinstance(data.frame, MetricsFrame):
            self.record_frame(data.frame)
        elif isinstance(data.frame, (EndFrame, CancelFrame)) and self.on_cap_reached is not None:
            self._ended = True
            self.client.unwatch_cap(self.session_id)

    def record_frame(self, frame: MetricsFrame) -> list[str]:
        """Records the usage in one metrics frame; returns the event ids."""
        observed = time.time()
        ids = []
        for index, metric in enumerate(frame.data):
            usage = usage_of_metric(metric, observed)
            if usage is not None:
                event_id = self._record(usage, self._keys.key(self, (frame.id, index), usage))
                if event_id is not None:
                    ids.append(event_id)
        return ids

    def record_usage(self, record: ServiceUsageRecord, *, source: object = None) -> str | None:
        """
        Records one ServiceUsageRecord; returns its event id, or None when it bills nothing. `source` is
        what reported it: each source's records are counted apart, and so matched with the others'.
        """
        usage = usage_of_record(record)
        return self._record(usage, self._keys.key(source, record.model_dump_json(), usage))

    def _record(self, usage: WorkUsage, key: str) -> str | None:
        fields = event_fields(usage)
        if fields is None:
            return None
        if key in self._recorded:
            return event_id_for(self.user_id, key)
        if self.on_cap_reached is not None and not self._cap_watched and not self._ended:
            # Here, on the pipeline's loop, which the callback is then delivered on.
            self._cap_watched = True
            watch_cap(self.client, self.session_id, self.on_cap_reached)
        try:
            event_id = self.client.record(
                session_id=self.session_id,
                user_id=self.user_id,
                agent_id=self.agent_id,
                provider=pipecat_provider(usage.processor),
                model=usage.model or None,
                key=key,
                timestamp=usage.timestamp,
                **fields,
            )
        except QueueFull:
            log.error("callmeter: %s usage of %s not recorded: the queue is full", usage.kind, usage.processor)
            return None
        self._recorded.add(key)
        return event_id


class WorkKeys:
    """
    The key of each piece of work. Pipecat gives a piece of work no id that both a MetricsFrame and a
    ServiceUsageRecord carry (a record has no frame id, and its timestamp is the observer's clock), so a
    piece of work is known by what it consumed and which occurrence of that it is. Each source sees the
    same pieces in the same order, so the n-th identical usage of one source is the n-th of another;
    a source that started late or stopped early sees fewer of them, and its keys are a subset of the
    others', never a second count.
    """

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._known: dict[tuple[object, object], str] = {}
        self._occurrences: dict[tuple[object, str], int] = {}

    def key(self, source: object, handing: object, usage: WorkUsage) -> str:
        """The key of `usage` as `source` handed it (`handing` tells a replay of it from a new piece of work)."""
        known = self._known.get((source, handing))
        if known is not None:
            return known
        identity = usage.identity()
        occurrence = self._occurrences.get((source, identity), 0) + 1
        self._occurrences[(source, identity)] = occurrence
        key = f"pipecat:{self._session_id}:{identity}:{occurrence}"
        self._known[(source, handing)] = key
        return key


def usage_of_metric(metric: MetricsData, timestamp: float) -> WorkUsage | None:
    """The usage in one metric of a MetricsFrame (None for latency and other metrics)."""
    if isinstance(metric, LLMUsageMetricsData):
        return WorkUsage("llm", metric.processor, metric.model, _token_counts(metric.value), timestamp)
    if isinstance(metric, STTUsageMetricsData):
        seconds = metric.value.audio_seconds
        return WorkUsage("stt", metric.processor, metric.model, {"audio_seconds": seconds}, timestamp)
    if isinstance(metric, TTSUsageMetricsData):
        return WorkUsage("tts", metric.processor, metric.model, {"characters": metric.value}, timestamp)
    return None


def usage_of_record(record: ServiceUsageRecord) -> WorkUsage:
    """The usage in one ServiceUsageRecord, as usage_of_metric makes it of the metric it came from."""
    kind = str(record.kind.value)
    if kind == "llm":
        counts = _token_counts(record)
    elif kind == "stt":
        counts = {"audio_seconds": record.audio_seconds or 0}
    elif kind == "tts":
        counts = {"characters": record.characters or 0}
    else:
        counts = {}  # a kind this client does not know yet: event_fields bills nothing for it
    return WorkUsage(kind, record.processor, record.model, counts, record.timestamp)


def _token_counts(tokens: Any) -> dict[str, int]:
    return {name: getattr(tokens, name, None) or 0 for name in TOKEN_FIELDS}


def event_fields(usage: WorkUsage) -> dict[str, Any] | None:
    """The usage event's type and quantities; None when the work bills nothing."""
    if usage.kind == "llm":
        return _llm_fields(usage.counts)
    if usage.kind == "stt":
        seconds = usage.counts["audio_seconds"]
        if seconds <= 0:
            return None
        # repr() is the float's shortest exact text; the server divides by 60 exactly.
        return {"event_type": "stt_minutes", "usage_data": {"audio_duration_seconds": Decimal(repr(seconds))}}
    if usage.kind == "tts":
        characters = usage.counts["characters"]
        return {"event_type": "tts_characters", "quantity": characters} if characters > 0 else None
    return None


def _llm_fields(counts: dict[str, int]) -> dict[str, Any] | None:
    prompt, completion = counts["prompt_tokens"], counts["completion_tokens"]
    cache_read, cache_write = counts["cache_read_input_tokens"], counts["cache_creation_input_tokens"]
    # callmeter's input_tokens holds its cached parts, as OpenAI's prompt_tokens does. Anthropic and
    # Bedrock report prompt_tokens net of the cache, and Pipecat then makes total_tokens the gross figure
    # (LLMTokenUsage); a prompt smaller than its cache counts cannot hold them either.
    cached = cache_read + cache_write
    net = cached > 0 and (counts["total_tokens"] == prompt + completion + cached or prompt < cached)
    input_tokens = prompt + cached if net else prompt
    if input_tokens + completion == 0:
        return None
    parts = {
        "cached_input_tokens": cache_read,
        "cache_write_tokens": cache_write,
        "audio_input_tokens": counts["input_audio_tokens"],
        "cached_audio_input_tokens": counts["cache_read_input_audio_tokens"],
        "audio_output_tokens": counts["output_audio_tokens"],
        "reasoning_tokens": counts["reasoning_tokens"],
    }
    return {
        "event_type": "llm_tokens",
        "quantity": input_tokens + completion,
        "input_tokens": input_tokens,
        "output_tokens": completion,
        **{name: count for name, count in parts.items() if count},
    }
