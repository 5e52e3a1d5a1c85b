"""LiveKit Agents: the usage in `metrics_collected` events, recorded once per metric."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from livekit.agents import metrics as lk

from ._pending import QueueFull
from .aio import AsyncCallmeter
from .client import Callmeter
from .providers import provider_id

log = logging.getLogger("callmeter.livekit")


class UsageForwarder:
    """
    Turns LiveKit's metrics (what `metrics_collected` carries as ev.metrics) into callmeter usage:
    LLMMetrics and RealtimeModelMetrics as `llm_tokens` with their token kinds, STTMetrics as
    `stt_minutes` (the audio duration, divided exactly by the server), TTSMetrics as
    `tts_characters`. Each event's key is made of the metric's own ids, so one metric forwarded twice
    is one event. Metrics with nothing to bill (VAD, end of utterance, zero counts) are skipped.
    """

    def __init__(
        self,
        client: Callmeter | AsyncCallmeter,
        *,
        session_id: str,
        user_id: str,
        agent_id: str | None = None,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.user_id = user_id
        self.agent_id = agent_id
        self.collector = lk.ModelUsageCollector()
        self.recorded: dict[str, int] = {}
        self._seen: set[str] = set()

    def on_metrics(self, metrics: Any) -> str | None:
        """Records one metric; returns its event id, or None when it bills nothing."""
        usage = _usage_of(metrics)
        if usage is None:
            return None
        key = metric_key(metrics)
        if key not in self._seen:
            self._seen.add(key)
            self.collector.collect(metrics)
        metadata = getattr(metrics, "metadata", None)
        try:
            return self.client.record(
                session_id=self.session_id,
                user_id=self.user_id,
                agent_id=self.agent_id,
                provider=provider_id(getattr(metadata, "model_provider", None)),
                model=getattr(metadata, "model_name", None) or None,
                key=key,
                timestamp=metrics.timestamp,
                **usage,
            )
        except QueueFull:
            log.error("callmeter: usage of %s not recorded: the queue is full", key)
            return None

    def attach(self, session: Any) -> None:
        """Subscribes to an AgentSession's `metrics_collected` event."""
        session.on("metrics_collected", lambda event: self.on_metrics(event.metrics))

    def usage_summary(self) -> list[Any]:
        """LiveKit's own usage totals of what this forwarder saw (ModelUsageCollector), to compare with."""
        return self.collector.flatten()


def metric_key(metrics: Any) -> str:
    """The metric's own identity: its type, label, request and speech ids and its timestamp."""
    parts = [
        getattr(metrics, "type", type(metrics).__name__),
        getattr(metrics, "label", ""),
        getattr(metrics, "request_id", ""),
        getattr(metrics, "speech_id", None) or getattr(metrics, "segment_id", None) or "",
        repr(getattr(metrics, "timestamp", "")),
    ]
    return "livekit:" + "|".join(str(part) for part in parts)


def _usage_of(metrics: Any) -> dict[str, Any] | None:
    if isinstance(metrics, lk.LLMMetrics):
        total = metrics.prompt_tokens + metrics.completion_tokens
        if total == 0:
            return None
        return _tokens(
            quantity=total,
            input_tokens=metrics.prompt_tokens,
            cached_input_tokens=metrics.prompt_cached_tokens,
            cache_write_tokens=getattr(metrics, "cache_creation_tokens", 0),
            output_tokens=metrics.completion_tokens,
            reasoning_tokens=getattr(metrics, "reasoning_tokens", 0),
        )
    if isinstance(metrics, lk.RealtimeModelMetrics):
        total = metrics.input_tokens + metrics.output_tokens
        if total == 0:
            return None
        inputs, outputs = metrics.input_token_details, metrics.output_token_details
        cached = inputs.cached_tokens_details
        return _tokens(
            quantity=total,
            input_tokens=metrics.input_tokens,
            cached_input_tokens=inputs.cached_tokens,
            audio_input_tokens=inputs.audio_tokens,
            cached_audio_input_tokens=cached.audio_tokens if cached else 0,
            output_tokens=metrics.output_tokens,
            audio_output_tokens=outputs.audio_tokens,
        )
    if isinstance(metrics, lk.STTMetrics):
        if metrics.audio_duration <= 0:
            return None
        return {"event_type": "stt_minutes", "usage_data": {"audio_duration_seconds": Decimal(repr(metrics.audio_duration))}}
    if isinstance(metrics, lk.TTSMetrics):
        if metrics.characters_count <= 0:
            return None
        return {"event_type": "tts_characters", "quantity": metrics.characters_count}
    return None


def _tokens(**counts: int) -> dict[str, Any]:
    """An llm_tokens event with the token kinds that are not zero (input, output and quantity always)."""
    kept = {name: count for name, count in counts.items() if count or name in ("quantity", "input_tokens", "output_tokens")}
    return {"event_type": "llm_tokens", **kept}


async def meter_job(
    ctx: Any,
    client: AsyncCallmeter,
    *,
    user_id: str,
    agent_id: str | None = None,
    session: Any = None,
    session_data: dict[str, Any] | None = None,
) -> UsageForwarder:
    """
    For the usual worker entrypoint: creates the callmeter session of the job's room, forwards the
    AgentSession's metrics (when given; else call attach() later), and on the job's shutdown ends
    the session, flushes, and logs when LiveKit's own usage totals differ from what was recorded.
    """
    created = await client.start_session(ctx.room.name, user_id, agent_id, session_data)
    forwarder = UsageForwarder(client, session_id=created["id"], user_id=user_id, agent_id=agent_id)
    if session is not None:
        forwarder.attach(session)

    async def finish(*_: Any) -> None:
        await client.flush()
        await client.end_session(created["id"])
        compare_totals(forwarder, session)

    ctx.add_shutdown_callback(finish)
    return forwarder


def compare_totals(forwarder: UsageForwarder, session: Any = None) -> bool:
    """True when LiveKit's usage totals for the session equal what the forwarder recorded; else a log line."""
    ours = {(u.type, u.provider, u.model): u.model_dump() for u in forwarder.usage_summary()}
    theirs_source = getattr(session, "usage", None)
    model_usage = getattr(theirs_source, "model_usage", None) if theirs_source is not None else None
    if model_usage is None:
        return True
    theirs = {(u.type, u.provider, u.model): u.model_dump() for u in model_usage}
    differing = {key for key in theirs if key[0] in ("llm_usage", "stt_usage", "tts_usage") and theirs[key] != ours.get(key)}
    if differing:
        log.warning("callmeter: LiveKit's usage totals differ from what was recorded for %s", sorted(differing))
        return False
    return True
