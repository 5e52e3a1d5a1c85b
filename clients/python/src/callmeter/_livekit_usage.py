"""
LiveKit's usage counters and the usage events they become (docs/clients-livekit.md).

A usage is LiveKit's own shape, one per kind, provider and model: `llm_usage`, `tts_usage` and
`stt_usage` as LLMModelUsage, TTSModelUsage and STTModelUsage name their counters. The session's
running totals arrive in that shape, and each metric of the older `metrics_collected` event is turned
into it the way LiveKit's ModelUsageCollector adds it up, so both paths send the same bodies.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping

from livekit.agents import metrics as lk

Counters = dict[str, Decimal]

# The kinds callmeter bills; LiveKit's interruption and end-of-turn request counts are not usage of a vendor.
BILLED_KINDS = ("llm_usage", "tts_usage", "stt_usage")

# LLMModelUsage's counters -> the wire's (WIRE: every token kind is a part of input or output tokens).
_LLM_FIELDS = {
    "input_cached_tokens": "cached_input_tokens",
    "input_cache_creation_tokens": "cache_write_tokens",
    "input_audio_tokens": "audio_input_tokens",
    "input_cached_audio_tokens": "cached_audio_input_tokens",
    "input_image_tokens": "image_input_tokens",
    "input_cached_image_tokens": "cached_image_input_tokens",
    "output_audio_tokens": "audio_output_tokens",
    "output_reasoning_tokens": "reasoning_tokens",
    "session_duration": "session_duration_seconds",
}
# The text parts are the remainder of their whole (WIRE): carried in usage_data, not priced apart.
_LLM_TEXT_FIELDS = {
    "input_text_tokens": "text_input_tokens",
    "input_cached_text_tokens": "cached_text_input_tokens",
    "output_text_tokens": "text_output_tokens",
}


def number(value: Any) -> Decimal:
    """A counter exactly as LiveKit holds it: an int, or the shortest decimal that reads back as its float."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a counter")
    return Decimal(value) if isinstance(value, int) else Decimal(repr(float(value)))


def counters_of(usage: Any) -> tuple[str, str, str, Counters] | None:
    """(kind, provider, model, counters) of a LiveKit ModelUsage, or None when callmeter does not bill its kind."""
    dumped = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
    kind = dumped.pop("type", None)
    if kind not in BILLED_KINDS:
        return None
    provider, model = dumped.pop("provider", "") or "", dumped.pop("model", "") or ""
    return kind, provider, model, {name: number(value) for name, value in sorted(dumped.items())}


def event_fields(kind: str, counts: Mapping[str, Decimal]) -> dict[str, Any] | None:
    """The event type and quantities of a usage's counts (a delta), or None when they bill nothing."""
    if not any(counts.values()):
        return None
    if kind == "llm_usage":
        return _llm(counts)
    if kind == "tts_usage":
        return _tts(counts)
    return _stt(counts)


def _llm(counts: Mapping[str, Decimal]) -> dict[str, Any]:
    inputs, outputs = counts.get("input_tokens", Decimal(0)), counts.get("output_tokens", Decimal(0))
    fields: dict[str, Any] = {
        "event_type": "llm_tokens",
        # An event may carry only the session's connected time: quantity 0 tokens then (WIRE).
        "quantity": inputs + outputs,
        "input_tokens": inputs,
        "output_tokens": outputs,
    }
    fields.update({wire: counts[name] for name, wire in _LLM_FIELDS.items() if counts.get(name)})
    text = {wire: counts[name] for name, wire in _LLM_TEXT_FIELDS.items() if counts.get(name)}
    if text:
        fields["usage_data"] = text
    return fields


def _tts(counts: Mapping[str, Decimal]) -> dict[str, Any]:
    fields: dict[str, Any] = {"event_type": "tts_characters", "quantity": counts.get("characters_count", Decimal(0))}
    if counts.get("input_tokens") or counts.get("output_tokens"):
        # Token-billed voices (gpt-4o-mini-tts): text in, audio out (WIRE).
        fields["input_tokens"] = counts.get("input_tokens", Decimal(0))
        fields["output_tokens"] = counts.get("output_tokens", Decimal(0))
        if fields["output_tokens"]:
            fields["audio_output_tokens"] = fields["output_tokens"]
    if counts.get("audio_duration"):
        fields["usage_data"] = {"audio_duration_seconds": counts["audio_duration"]}
    return fields


def _stt(counts: Mapping[str, Decimal]) -> dict[str, Any]:
    # The duration is always sent: it is the event's quantity (minutes, divided exactly by the server).
    fields: dict[str, Any] = {
        "event_type": "stt_minutes",
        "usage_data": {"audio_duration_seconds": counts.get("audio_duration", Decimal(0))},
    }
    if counts.get("input_tokens") or counts.get("output_tokens"):
        inputs = counts.get("input_tokens", Decimal(0))
        fields["input_tokens"] = inputs
        fields["output_tokens"] = counts.get("output_tokens", Decimal(0))
        # Audio in (WIRE); the provider's own audio part where it reports one, as LiveKit carries it.
        audio = counts.get("input_audio_tokens") or inputs
        if audio:
            fields["audio_input_tokens"] = audio
    return fields


def metric_usage(metrics: Any) -> tuple[str, str, str, Counters] | None:
    """One metric of `metrics_collected` as the usage LiveKit's ModelUsageCollector adds it up to."""
    metadata = getattr(metrics, "metadata", None)
    provider = getattr(metadata, "model_provider", None) or ""
    model = getattr(metadata, "model_name", None) or ""
    get = lambda field: number(getattr(metrics, field, 0) or 0)  # noqa: E731 (older versions lack some fields)
    if isinstance(metrics, lk.LLMMetrics):
        counts = {
            "input_tokens": get("prompt_tokens"),
            "input_cached_tokens": get("prompt_cached_tokens"),
            "input_cache_creation_tokens": get("cache_creation_tokens"),
            "output_tokens": get("completion_tokens"),
            "output_reasoning_tokens": get("reasoning_tokens"),
        }
        return "llm_usage", provider, model, counts
    if isinstance(metrics, lk.RealtimeModelMetrics):
        return "llm_usage", provider, model, _realtime(metrics, get)
    if isinstance(metrics, lk.TTSMetrics):
        fields = ("input_tokens", "output_tokens", "characters_count", "audio_duration")
        return "tts_usage", provider, model, {field: get(field) for field in fields}
    if isinstance(metrics, lk.STTMetrics):
        fields = ("input_tokens", "input_audio_tokens", "output_tokens", "audio_duration")
        return "stt_usage", provider, model, {field: get(field) for field in fields}
    return None


def _realtime(metrics: Any, get: Any) -> Counters:
    inputs, outputs = metrics.input_token_details, metrics.output_token_details
    cached = inputs.cached_tokens_details
    part = lambda details, field: number(getattr(details, field, 0) or 0) if details else Decimal(0)  # noqa: E731
    return {
        "input_tokens": get("input_tokens"),
        "input_cached_tokens": part(inputs, "cached_tokens"),
        "input_audio_tokens": part(inputs, "audio_tokens"),
        "input_cached_audio_tokens": part(cached, "audio_tokens"),
        "input_text_tokens": part(inputs, "text_tokens"),
        "input_cached_text_tokens": part(cached, "text_tokens"),
        "input_image_tokens": part(inputs, "image_tokens"),
        "input_cached_image_tokens": part(cached, "image_tokens"),
        "output_tokens": get("output_tokens"),
        "output_audio_tokens": part(outputs, "audio_tokens"),
        "output_text_tokens": part(outputs, "text_tokens"),
        "session_duration": get("session_duration"),
    }
