"""
LiveKit Agents: a call's usage, forwarded to callmeter exactly once (docs/clients-livekit.md).

livekit-agents 1.5 and later emit `session_usage_updated` after every metric, with the session's running
totals per kind, provider and model (LLMModelUsage, TTSModelUsage, STTModelUsage). UsageForwarder sends
each total's growth since the last total it forwarded, as one usage event, and names the event after the
totals reached: the event's key is the call, the run of LiveKit's counters, the kind, provider and model,
and every counter's value in that snapshot (the client makes it a uuid5). So:
- the same snapshot seen again (a second forwarder on the session, the event delivered twice, a replay of
  the run's snapshots from its start) is the same event id, which the server counts once;
- a snapshot older than one already forwarded adds nothing and is skipped;
- an event the client could not queue (QueueFull) leaves the forwarded totals where they were, so the next
  snapshot carries its growth, under the next snapshot's id;
- what was recorded before a worker died is re-sent from the client's spool under the same ids.
LiveKit's totals start from zero at each AgentSession.start(), so each run of them has its own ids: the
run is the session's start time (LiveKit names a run no other way), and a worker started again, whose new
session counts from zero in the same call, is new usage and never mistaken for the old run's.

The model is the one that served: a FallbackAdapter passes on the metrics of the instance that answered,
so LiveKit's totals, and the events, are per real provider and model.

Versions without the event (before 1.5) are served from `metrics_collected`, one event per metric named
after the metric's own ids. Newer ones are never subscribed to it: it is deprecated there, and LiveKit
logs so for every subscription.
"""

from __future__ import annotations

import logging
import typing
from decimal import Decimal
from typing import Any

from livekit.agents.voice import events as lk_events

from ._caps import CapCallback, watch_cap
from ._livekit_usage import Counters, counters_of, event_fields, metric_usage
from ._pending import QueueFull
from .aio import AsyncCallmeter
from .client import Callmeter
from .providers import provider_id

log = logging.getLogger("callmeter.livekit")

USAGE_EVENT = "session_usage_updated"
# Whether the installed livekit-agents emits the session's running totals (1.5 and later).
EMITS_USAGE = USAGE_EVENT in typing.get_args(getattr(lk_events, "EventTypes", None))

_Key = tuple[str, str, str, str]  # run, kind, provider, model


class UsageForwarder:
    """
    Forwards an AgentSession's usage to callmeter: attach(session), or on_usage()/on_metrics() by hand.
    With on_cap_reached, the call's standing is watched once its usage is sent (Callmeter.watch_cap), and
    on_cap_reached(standing) runs once, on the session's event loop, when the call reached its per-call cap.
    """

    def __init__(
        self,
        client: Callmeter | AsyncCallmeter,
        *,
        session_id: str,
        user_id: str,
        agent_id: str | None = None,
        on_cap_reached: CapCallback | None = None,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.user_id = user_id
        self.agent_id = agent_id
        self.on_cap_reached = on_cap_reached
        self._cap_watched = False
        # What was forwarded: per run, kind, provider and model, the totals reached.
        self.forwarded: dict[_Key, Counters] = {}
        self._seen_metrics: set[str] = set()

    def on_usage(self, usage: Any, *, run: str = "", timestamp: float | None = None) -> list[str]:
        """
        Forwards a snapshot of LiveKit's running totals (an AgentSessionUsage or its model_usage list):
        one event per kind, provider and model that grew; returns their event ids.
        """
        recorded = []
        for model_usage in getattr(usage, "model_usage", usage):
            parsed = counters_of(model_usage)
            if parsed is None:
                continue
            kind, provider, model, reached = parsed
            key = (run, kind, provider, model)
            event_id = self._forward_growth(key, reached, timestamp)
            if event_id is not None:
                recorded.append(event_id)
        return recorded

    def _forward_growth(self, key: _Key, reached: Counters, timestamp: float | None) -> str | None:
        before = self.forwarded.get(key, {})
        delta = {name: value - before.get(name, Decimal(0)) for name, value in reached.items()}
        if all(value <= 0 for value in delta.values()):
            return None  # this snapshot or a later one was forwarded already
        if any(value < 0 for value in delta.values()):
            # Within a run LiveKit's totals only grow; a mix means they restarted under the same run.
            log.warning("callmeter: LiveKit's totals for %s went down and up at once: not forwarded", key)
            return None
        fields = event_fields(key[1], delta)
        if fields is None:
            return None
        snapshot = ",".join(f"{name}={value}" for name, value in sorted(reached.items()))
        event_key = "livekit-usage:" + "|".join((self.session_id, *key, snapshot))
        event_id = self._record(key[2], key[3], event_key, timestamp, fields)
        if event_id is not None:
            self.forwarded[key] = dict(reached)
        return event_id

    def on_metrics(self, metrics: Any) -> str | None:
        """
        Records one metric of `metrics_collected` (versions without session_usage_updated); returns its
        event id, or None when it bills nothing.
        """
        parsed = metric_usage(metrics)
        if parsed is None:
            return None
        kind, provider, model, counts = parsed
        fields = event_fields(kind, counts)
        if fields is None:
            return None
        key = metric_key(metrics)
        event_id = self._record(provider, model, key, metrics.timestamp, fields)
        if event_id is not None and key not in self._seen_metrics:
            self._seen_metrics.add(key)
            run_totals = self.forwarded.setdefault(("metrics", kind, provider, model), {})
            for name, value in counts.items():
                run_totals[name] = run_totals.get(name, Decimal(0)) + value
        return event_id

    def _record(
        self, provider: str, model: str, key: str, timestamp: float | None, fields: dict[str, Any]
    ) -> str | None:
        if self.on_cap_reached is not None and not self._cap_watched:
            # Here, on the session's loop, which the callback is then delivered on.
            self._cap_watched = True
            watch_cap(self.client, self.session_id, self.on_cap_reached)
        try:
            return self.client.record(
                session_id=self.session_id,
                user_id=self.user_id,
                agent_id=self.agent_id,
                provider=provider_id(provider),
                model=model or None,
                key=key,
                timestamp=timestamp,
                **fields,
            )
        except QueueFull:
            log.error("callmeter: usage of %s not recorded: the queue is full", key)
            return None

    def attach(self, session: Any) -> None:
        """
        Subscribes to an AgentSession: `session_usage_updated` where LiveKit has it (each run of the
        session's totals told apart by its start time), else `metrics_collected`; and to its `close`,
        after which the call's cap is watched no more.
        """
        if self.on_cap_reached is not None:
            session.on("close", lambda _event: self.client.unwatch_cap(self.session_id))
        if EMITS_USAGE:
            session.on(
                USAGE_EVENT,
                lambda event: self.on_usage(event.usage, run=run_of(session), timestamp=event.created_at),
            )
        else:
            session.on("metrics_collected", lambda event: self.on_metrics(event.metrics))

    def totals(self, run: str = "") -> dict[tuple[str, str, str], Counters]:
        """What was forwarded for a run, per kind, provider and model, in LiveKit's counters."""
        return {key[1:]: dict(counts) for key, counts in self.forwarded.items() if key[0] == run}


def run_of(session: Any) -> str:
    """The run of an AgentSession's totals: its start time (LiveKit resets the totals at each start())."""
    started = getattr(session, "_started_at", None)
    return "" if started is None else repr(started)


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


async def meter_job(
    ctx: Any,
    client: AsyncCallmeter,
    *,
    user_id: str,
    agent_id: str | None = None,
    session: Any = None,
    session_data: dict[str, Any] | None = None,
    on_cap_reached: CapCallback | None = None,
) -> UsageForwarder:
    """
    For the usual worker entrypoint: creates the callmeter session of the job's room, forwards the
    AgentSession's usage (when given; else call attach() later, before session.start()), calls
    on_cap_reached(standing) once if the call reaches its per-call cap, and on the job's shutdown ends
    the session, flushes, and logs when LiveKit's own totals differ from what was forwarded.
    """
    created = await client.start_session(ctx.room.name, user_id, agent_id, session_data)
    forwarder = UsageForwarder(
        client, session_id=created["id"], user_id=user_id, agent_id=agent_id, on_cap_reached=on_cap_reached
    )
    if session is not None:
        forwarder.attach(session)

    async def finish(*_: Any) -> None:
        await client.flush()
        await client.end_session(created["id"])
        if session is not None:
            compare_totals(forwarder, session)

    ctx.add_shutdown_callback(finish)
    return forwarder


def compare_totals(forwarder: UsageForwarder, session: Any) -> bool:
    """True when the session's own totals (LLM, TTS, STT) equal what was forwarded for its run; else a warning."""
    usage = getattr(session, "usage", None)
    if usage is None:
        return True  # a version without totals of its own
    run = run_of(session) if EMITS_USAGE else "metrics"
    ours = forwarder.totals(run)
    differing = []
    for model_usage in usage.model_usage:
        parsed = counters_of(model_usage)
        if parsed is None:
            continue
        kind, provider, model, theirs = parsed
        forwarded = ours.get((kind, provider, model), {})
        if any(value != forwarded.get(name, Decimal(0)) for name, value in theirs.items()):
            differing.append((kind, provider, model))
    if differing:
        log.warning("callmeter: LiveKit's usage totals differ from what was forwarded for %s", sorted(differing))
        return False
    return True


__all__ = ["UsageForwarder", "compare_totals", "meter_job", "metric_key", "run_of"]
