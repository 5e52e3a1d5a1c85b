"""AsyncCallmeter: the same client for asyncio workers (LiveKit Agents, Pipecat)."""

from __future__ import annotations

import asyncio
from typing import Any

from ._caps import CapCallback, SessionBudget, on_running_loop
from .client import Callmeter


class AsyncCallmeter:
    """
    The asyncio face of Callmeter. record() only queues, as there; the batches go out from the same
    sender thread, so no network or disk wait ever runs on the event loop, and the session calls and
    flush() are awaited in a worker thread (asyncio.to_thread).
    """

    def __init__(self, base_url: str, api_key: str | None = None, **options: Any) -> None:
        self.sync = Callmeter(base_url, api_key, **options)

    def record(self, **fields: Any) -> str:
        """Queues one usage event (the fields of Callmeter.record) and returns its event id; never waits."""
        return self.sync.record(**fields)

    @property
    def pending(self) -> int:
        return self.sync.pending

    def stats(self) -> dict[str, int]:
        """The counters (sent, rejected, dead_letters, auth_errors, retries, cap_checks, pending): Callmeter.stats."""
        return self.sync.stats()

    def set_api_key(self, api_key: str | None) -> None:
        """New credentials: events held after a 401 or 403 go with them at once."""
        self.sync.set_api_key(api_key)

    async def start_session(
        self,
        room_name: str,
        user_id: str,
        agent_id: str | None = None,
        session_data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.start_session, room_name, user_id, agent_id, session_data)

    async def update_session(self, session_id: str, **fields: Any) -> dict[str, Any]:
        return await asyncio.to_thread(lambda: self.sync.update_session(session_id, **fields))

    async def end_session(self, session_id: str, status: str = "COMPLETED") -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.end_session, session_id, status)

    async def session_budget(self, session_id: str) -> SessionBudget:
        """The call's standing against its per-call cap (Callmeter.session_budget)."""
        return await asyncio.to_thread(self.sync.session_budget, session_id)

    def watch_cap(self, session_id: str, on_cap_reached: CapCallback) -> None:
        """
        Callmeter.watch_cap, with on_cap_reached run on the event loop running here (a coroutine function
        awaited in a task there), once, when the call's standing turns `allowed: false`.
        """
        self.sync.watch_cap(session_id, on_running_loop(on_cap_reached))

    def unwatch_cap(self, session_id: str) -> None:
        self.sync.unwatch_cap(session_id)

    async def flush(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self.sync.flush, timeout)

    async def aclose(self, timeout: float | None = 30.0) -> bool:
        return await asyncio.to_thread(self.sync.close, timeout)

    async def __aenter__(self) -> "AsyncCallmeter":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
