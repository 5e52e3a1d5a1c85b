"""Usage event bodies as POST /api/usage/events/batch takes them: ids, times and exact quantities."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping

# Every client derives an event's id the same way (the TypeScript client too), so that a key
# recorded again — after a crash, a timeout or a restart, by either client — is the same event.
EVENT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://callmeter.dev/usage-event")

# The fields a usage event may carry besides its identity (docs/usage-events.md, docs/pricing.md "Token kinds").
QUANTITY_FIELDS = frozenset(
    {
        "quantity",
        "unit_cost",
        "total_cost",
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "audio_input_tokens",
        "cached_audio_input_tokens",
        "audio_output_tokens",
        "reasoning_tokens",
        "image_input_tokens",
        "cached_image_input_tokens",
        "session_duration_seconds",
    }
)


def event_id_for(user_id: str, key: str | None) -> str:
    """The idempotency key of an event: derived from `key` within its user, else random (fixed at record time)."""
    if key is None:
        return str(uuid.uuid4())
    return str(uuid.uuid5(EVENT_NAMESPACE, f"{user_id}:{key}"))


def exact(value: Any, field: str) -> int | str:
    """A quantity as the wire carries it exactly: an int, or a plain decimal string. Never a float."""
    if isinstance(value, bool):
        raise TypeError(f"{field}: a boolean is not a quantity")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{field}: {value} is not a quantity of at least 0")
        return value
    if isinstance(value, float):
        # repr() is the shortest text that reads back as this float: 0.1 stays "0.1", not 0.1000000000000000055…
        value = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            value = Decimal(value)
        except InvalidOperation as error:
            raise ValueError(f"{field}: {value!r} is not a decimal number") from error
    if not isinstance(value, Decimal):
        raise TypeError(f"{field}: {type(value).__name__} is not a quantity")
    if not value.is_finite() or value < 0:
        raise ValueError(f"{field}: {value} is not a finite quantity of at least 0")
    if value == value.to_integral_value():
        return int(value)
    return format(value.normalize(), "f")


def timestamp_text(when: datetime | float | None) -> str:
    """ISO 8601 in UTC with milliseconds; a number is seconds since the epoch (as LiveKit's metrics carry)."""
    if when is None:
        when = datetime.now(timezone.utc)
    elif isinstance(when, (int, float)):
        when = datetime.fromtimestamp(when, timezone.utc)
    elif when.tzinfo is None:
        raise ValueError("timestamp: a naive datetime is ambiguous; give it a time zone")
    return when.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def usage_body(
    *,
    session_id: str,
    user_id: str,
    provider: str,
    event_type: str,
    model: str | None,
    agent_id: str | None,
    key: str | None,
    timestamp: datetime | float | None,
    quantities: Mapping[str, Any],
) -> dict[str, Any]:
    """The body of one usage event, complete and fixed at record time, so any resend is byte for byte the same event."""
    body: dict[str, Any] = {
        "session_id": session_id,
        "user_id": user_id,
        "provider": provider,
        "event_type": event_type,
        "event_id": event_id_for(user_id, key),
        "timestamp": timestamp_text(timestamp),
    }
    if model is not None:
        body["model"] = model
    if agent_id is not None:
        body["agent_id"] = agent_id
    for field, value in quantities.items():
        if field == "usage_data":
            body["usage_data"] = {name: exact(part, f"usage_data.{name}") for name, part in value.items()}
        elif field in QUANTITY_FIELDS:
            body[field] = exact(value, field)
        else:
            raise TypeError(f"record() got an unexpected field {field!r}")
    if "quantity" not in body and "usage_data" not in body:
        raise ValueError("record() needs quantity= or usage_data=")
    return body
