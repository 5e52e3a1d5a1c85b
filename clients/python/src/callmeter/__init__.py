"""callmeter: usage of voice-AI agent workers, sent to callmeter batched, retried and counted once."""

from ._pending import QueueFull
from ._caps import SessionBudget
from ._records import EVENT_NAMESPACE, event_id_for
from ._version import __version__
from .aio import AsyncCallmeter
from .client import AuthError, Callmeter, CallmeterError, Rejected

__all__ = [
    "AsyncCallmeter",
    "AuthError",
    "Callmeter",
    "CallmeterError",
    "EVENT_NAMESPACE",
    "QueueFull",
    "Rejected",
    "SessionBudget",
    "event_id_for",
    "__version__",
]
