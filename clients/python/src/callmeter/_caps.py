"""Per-call caps: a call's standing, and the watch that tells a worker once that its call reached its cap."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Iterable

log = logging.getLogger("callmeter")

# The server stores acknowledged usage within about a second: a call is checked (at most every interval)
# until one check started this long after its last acknowledged usage, so the usage that crossed is seen.
SETTLE_S = 2.0


@dataclass(frozen=True)
class SessionBudget:
    """GET /api/sessions/{id}/budget: the call's spend against its lowest per-call cap (money exact)."""

    session_id: str
    allowed: bool
    spent: Decimal
    cap: Decimal | None
    remaining: Decimal | None
    budget_id: str | None

    @classmethod
    def from_answer(cls, answer: dict[str, Any]) -> "SessionBudget":
        def money(value: Any) -> Decimal | None:
            return None if value is None else Decimal(str(value))

        return cls(
            session_id=answer["session_id"],
            allowed=bool(answer["allowed"]),
            spent=Decimal(str(answer["spent"])),
            cap=money(answer.get("cap")),
            remaining=money(answer.get("remaining")),
            budget_id=answer.get("budget_id"),
        )


CapCallback = Callable[[SessionBudget], Any]


@dataclass
class _Watch:
    callbacks: list[CapCallback]
    last_sent: float | None = None  # when usage of the call was last acknowledged
    last_attempt: float = float("-inf")
    last_seen: float = float("-inf")  # when the last check that got an answer started
    failures: int = 0
    checking: bool = field(default=False)


class CapWatcher:
    """
    Checks the standing of watched calls after their usage was acknowledged, at most every `interval`
    seconds per call, on a thread of its own (started at the first watch), so a slow or failing check
    never holds up a batch. Each call's callbacks run once, when `allowed` turns false; the call is then
    forgotten, as it is by unwatch() (its end).
    """

    def __init__(
        self,
        fetch: Callable[[str], SessionBudget],
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        background: bool = True,  # False: no thread, check_due() is called by hand (tests)
    ) -> None:
        if interval <= 0:
            raise ValueError("cap_check_interval must be above 0")
        self._fetch, self._interval, self._clock = fetch, interval, clock
        self._watches: dict[str, _Watch] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False
        self._background = background
        # Reads of a standing the watch made (failed ones too): the request rate a worker can export.
        self.checks = 0

    def watch(self, session_id: str, callback: CapCallback) -> None:
        with self._wake:
            if self._closing:
                raise RuntimeError("the client is closed")
            self._watches.setdefault(session_id, _Watch([])).callbacks.append(callback)
            if self._thread is None and self._background:
                self._thread = threading.Thread(target=self._run, name="callmeter-caps", daemon=True)
                self._thread.start()

    def unwatch(self, session_id: str) -> None:
        with self._wake:
            self._watches.pop(session_id, None)

    def sent(self, session_ids: Iterable[str]) -> None:
        """Usage of these calls was acknowledged: their standing is due (zero cost while nothing is watched)."""
        if not self._watches:
            return
        with self._wake:
            now = self._clock()
            for session_id in set(session_ids):
                watch = self._watches.get(session_id)
                if watch is not None:
                    watch.last_sent = now
            self._wake.notify_all()

    def close(self) -> None:
        with self._wake:
            self._closing = True
            self._watches.clear()
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join(5.0)

    def _next_due(self, now: float) -> tuple[list[str], float | None]:
        """The calls due now, and how long until the next one is (None: none waits)."""
        due, wait = [], None
        for session_id, watch in self._watches.items():
            if watch.last_sent is None or watch.checking or watch.last_seen >= watch.last_sent + SETTLE_S:
                continue
            ready = watch.last_attempt + self._interval
            if now >= ready:
                due.append(session_id)
            else:
                wait = ready - now if wait is None else min(wait, ready - now)
        return due, wait

    def check_due(self) -> float | None:
        """Checks every call that is due; returns how long until the next one is (None: none waits)."""
        with self._wake:
            due, _ = self._next_due(self._clock())
            for session_id in due:
                self._watches[session_id].checking = True
        for session_id in due:
            self._check(session_id)
        with self._wake:
            return self._next_due(self._clock())[1]

    def _check(self, session_id: str) -> None:
        started = self._clock()
        self.checks += 1
        try:
            standing: SessionBudget | None = self._fetch(session_id)
            error: BaseException | None = None
        except Exception as failure:  # any failure is retried at the next interval, never raised
            standing, error = None, failure
        with self._wake:
            watch = self._watches.get(session_id)
            if watch is None:
                return  # the call ended while it was checked
            watch.checking, watch.last_attempt = False, started
            if standing is None:
                watch.failures += 1
                level = logging.WARNING if watch.failures == 1 else logging.DEBUG
                log.log(level, "callmeter: the budget of call %s could not be read (%r); retrying", session_id, error)
                return
            watch.failures, watch.last_seen = 0, started
            if standing.allowed:
                return
            del self._watches[session_id]
        for callback in watch.callbacks:
            try:
                callback(standing)
            except Exception:  # a callback's failure must not stop the checks of other calls
                log.exception("callmeter: on_cap_reached raised")

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._closing:
                    due, wait = self._next_due(self._clock())
                    if due:
                        break
                    self._wake.wait(wait)
                if self._closing:
                    return
            self.check_due()


def on_running_loop(callback: CapCallback) -> CapCallback:
    """
    The callback, delivered on the event loop running here (a coroutine function's result awaited in a
    task there); without a running loop, as it is, on the checker's thread.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return callback
    tasks: set[asyncio.Future[Any]] = set()

    def finished(task: asyncio.Future[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("callmeter: on_cap_reached raised", exc_info=task.exception())

    def run(standing: SessionBudget) -> None:
        try:
            result = callback(standing)
        except Exception:
            log.exception("callmeter: on_cap_reached raised")
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            tasks.add(task)
            task.add_done_callback(finished)

    return lambda standing: loop.call_soon_threadsafe(run, standing)


def watch_cap(client: Any, session_id: str, callback: CapCallback) -> None:
    """Watches the call's cap on either client, the callback delivered on the event loop running here."""
    core = getattr(client, "sync", client)  # AsyncCallmeter's Callmeter
    core.watch_cap(session_id, on_running_loop(callback))
