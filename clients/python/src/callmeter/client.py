"""The callmeter client: sessions, and usage events batched, retried and counted once."""

from __future__ import annotations

import email.utils
import logging
import os
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

import httpx

from ._caps import CapCallback, CapWatcher, SessionBudget
from ._dead_letters import DEAD_LETTER_FILE, DeadLetterFile, dead_letter
from ._pending import MemoryPending, Pending, QueueFull, SpoolPending
from ._records import usage_body
from ._version import __version__

log = logging.getLogger("callmeter")

BATCH_PATH = "/api/usage/events/batch"
MAX_BATCH = 1000  # the server's bound on one batch


@dataclass(frozen=True)
class Rejected:
    """
    An event the server refused for what it holds: moved to the dead letters (never dropped, never
    sent again by the client; `callmeter dead-letters resend` sends it again). `status` is the HTTP
    status when the event was refused as a whole request (413 for one too large), None when the
    batch's answer refused it as an item (`errors` then are that item's, e.g. a 409's message).
    """

    body: dict[str, Any]
    errors: Any
    status: int | None = None


@dataclass(frozen=True)
class AuthError:
    """The server refused the client's credentials (401) or their right to send (403); nothing is dropped."""

    status: int
    detail: Any
    # Events kept (in the spool or in memory) until the credentials are fixed.
    pending: int


class CallmeterError(RuntimeError):
    """A session call the server refused (4xx), or that could not be made within its attempts."""

    def __init__(self, message: str, status: int | None = None, detail: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


def _retry_after(response: httpx.Response | None) -> float | None:
    """Retry-After in seconds (a number or an HTTP date), when the server sent one."""
    value = None if response is None else response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return None if when is None else max(0.0, when.timestamp() - time.time())


def _retryable(response: httpx.Response) -> bool:
    return response.status_code in (408, 429) or response.status_code >= 500


# What a batch answered as a whole means for its events: the credentials (held until they are fixed),
# a transient fault (retried), or a request the server will not take in this size or shape (split, and
# a single event refused so is dead). Anything else (a 404 of a wrong base_url, a proxy's 405) is no
# verdict on the events: they are held and retried, never dropped.
AUTH = frozenset({401, 403})
SPLIT = frozenset({400, 413, 422})


def _forbidden(errors: Any) -> bool:
    """An item refused for the credential's rights (a bound key's other tenant), not for what it holds."""
    return isinstance(errors, list) and bool(errors) and all(
        isinstance(error, dict) and error.get("type") == "forbidden" for error in errors
    )


class Backoff:
    """
    Exponential backoff with full jitter, at least what Retry-After asks. Written here because the
    only runtime dependency is httpx: tenacity or backoff would add one for these few lines.
    """

    def __init__(self, base: float, cap: float) -> None:
        self.base, self.cap, self.attempt = base, cap, 0

    def next_delay(self, response: httpx.Response | None) -> float:
        delay = random.uniform(0, min(self.cap, self.base * 2**self.attempt))
        self.attempt += 1
        after = _retry_after(response)
        return delay if after is None else max(delay, after)

    def reset(self) -> None:
        self.attempt = 0


class Callmeter:
    """
    A thread-safe client for one worker process. record() only queues (in memory, or on disk with
    spool_dir=) and returns at once; a background thread sends batches of up to batch_size events
    every flush_interval seconds (or as soon as a batch is full), retries network errors, timeouts,
    429 and 5xx with backoff and jitter (honouring Retry-After) for as long as the client is open,
    and resends an unanswered batch with the same event ids, which the server counts once. An event
    leaves the queue only when the server took it, or refused it for what it holds and it is in the
    dead letters; refused credentials (401, 403) keep every event and are retried until fixed.
    A call given to watch_cap() is told once that it reached its per-call cap (cap_check_interval).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        batch_size: int = 200,
        flush_interval: float = 1.0,
        timeout: float = 10.0,
        max_queue: int = 100_000,
        spool_dir: str | None = None,
        on_rejected: Callable[[Rejected], None] | None = None,
        on_auth_error: Callable[[AuthError], None] | None = None,
        dead_letter_file: str | None = None,
        backoff_base: float = 0.25,
        backoff_cap: float = 10.0,
        auth_backoff_cap: float = 60.0,
        session_attempts: int = 8,
        cap_check_interval: float = 2.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be 1 to {MAX_BATCH}")
        headers = {"user-agent": f"callmeter-python/{__version__}"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        self._pending: Pending = SpoolPending(spool_dir) if spool_dir else MemoryPending(max_queue)
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._on_rejected = on_rejected
        self._on_auth_error = on_auth_error
        if dead_letter_file is None and spool_dir:
            dead_letter_file = os.path.join(spool_dir, DEAD_LETTER_FILE)
        self._dead_letters = DeadLetterFile(dead_letter_file) if dead_letter_file else None
        self._memory_dead_letters: list[dict[str, Any]] = []
        self._backoff = (backoff_base, backoff_cap)
        self._auth_backoff_cap = auth_backoff_cap
        self._auth_failing = False
        self._retry_now = False
        self._session_attempts = session_attempts
        self._wake = threading.Condition()
        self._flush_requested = 0
        self._flushed = 0
        self._closing = False
        # Counters a worker can read (or export): events the server took, events moved to the dead
        # letters, answers refusing the credentials, and batch attempts to be retried.
        self.rejected_count = 0
        self.sent_count = 0
        self.auth_error_count = 0
        self.retry_count = 0
        self._caps = CapWatcher(self._read_budget, cap_check_interval)
        self._thread = threading.Thread(target=self._run, name="callmeter-sender", daemon=True)
        self._thread.start()

    # -- usage -----------------------------------------------------------------------------------

    def record(
        self,
        *,
        session_id: str,
        user_id: str,
        provider: str,
        event_type: str,
        model: str | None = None,
        key: str | None = None,
        timestamp: datetime | float | None = None,
        agent_id: str | None = None,
        **quantities: Any,
    ) -> str:
        """Queues one usage event and returns its event id; never blocks on the network. QueueFull past max_queue."""
        if self._closing:
            raise RuntimeError("the client is closed")
        body = usage_body(
            session_id=session_id,
            user_id=user_id,
            provider=provider,
            event_type=event_type,
            model=model,
            agent_id=agent_id,
            key=key,
            timestamp=timestamp,
            quantities=quantities,
        )
        self._pending.add(body)
        if len(self._pending) >= self._batch_size:
            with self._wake:
                self._wake.notify()
        return body["event_id"]

    @property
    def pending(self) -> int:
        """Events recorded and not yet answered by the server."""
        return len(self._pending)

    @property
    def dead_letter_count(self) -> int:
        """Events in the dead letters (the file beside the spool, or memory without one)."""
        return len(self._dead_letters) if self._dead_letters is not None else len(self._memory_dead_letters)

    def dead_letters(self) -> list[dict[str, Any]]:
        """The dead letters: each {event_id, refused_at, status, errors, body}."""
        return self._dead_letters.read() if self._dead_letters is not None else list(self._memory_dead_letters)

    def stats(self) -> dict[str, int]:
        """The counters and gauges in one dict, for a worker's metrics (cap_checks: reads of a call's standing)."""
        return {
            "pending": self.pending,
            "sent": self.sent_count,
            "rejected": self.rejected_count,
            "dead_letters": self.dead_letter_count,
            "auth_errors": self.auth_error_count,
            "retries": self.retry_count,
            "cap_checks": self._caps.checks,
        }

    def set_api_key(self, api_key: str | None) -> None:
        """New credentials (e.g. from on_auth_error): held events are sent with them at once."""
        if api_key:
            self._http.headers["authorization"] = f"Bearer {api_key}"
        else:
            self._http.headers.pop("authorization", None)
        with self._wake:
            self._retry_now = True
            self._wake.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Waits until every event recorded before the call was answered; False if timeout came first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._wake:
            self._flush_requested += 1
            ticket = self._flush_requested
            self._wake.notify_all()
            while self._flushed < ticket and self._thread.is_alive():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._wake.wait(left)
        return self._flushed >= ticket

    def close(self, timeout: float | None = 30.0) -> bool:
        """Flushes, then stops. What could not be sent in time stays in the spool (or is logged as unsent)."""
        flushed = self.flush(timeout)
        with self._wake:
            self._closing = True
            self._wake.notify_all()
        self._thread.join(5.0)
        self._caps.close()
        left = len(self._pending)
        if left and not isinstance(self._pending, SpoolPending):
            log.error("callmeter: %d usage events were not sent before close; they are lost", left)
        elif left:
            log.warning("callmeter: %d usage events stay in the spool for the next start", left)
        if self._memory_dead_letters:
            log.error(
                "callmeter: %d refused usage events were kept in memory only (no spool_dir= or dead_letter_file=); they are lost",
                len(self._memory_dead_letters),
            )
        self._pending.close()
        self._http.close()
        return flushed and left == 0

    def __enter__(self) -> "Callmeter":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- sessions --------------------------------------------------------------------------------

    def start_session(
        self,
        room_name: str,
        user_id: str,
        agent_id: str | None = None,
        session_data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """POST /api/sessions/: the room's live session of this user (the same one again on a retry)."""
        body: dict[str, Any] = {"room_name": room_name, "user_id": user_id}
        if agent_id is not None:
            body["agent_id"] = agent_id
        if session_data is not None:
            body["session_data"] = session_data
        return self._call("POST", "/api/sessions/", body)

    def update_session(self, session_id: str, **fields: Any) -> dict[str, Any]:
        """PATCH /api/sessions/{id} with the given fields."""
        return self._call("PATCH", f"/api/sessions/{session_id}", fields)

    def end_session(self, session_id: str, status: str = "COMPLETED") -> dict[str, Any]:
        """Ends the session (COMPLETED or FAILED); its cap is watched no more."""
        self._caps.unwatch(session_id)
        return self._call("PATCH", f"/api/sessions/{session_id}", {"status": status})

    # -- caps ------------------------------------------------------------------------------------

    def session_budget(self, session_id: str) -> SessionBudget:
        """GET /api/sessions/{id}/budget: the call's spend against its per-call cap, and whether it may go on."""
        return SessionBudget.from_answer(self._call("GET", f"/api/sessions/{session_id}/budget", None))

    def watch_cap(self, session_id: str, on_cap_reached: CapCallback) -> None:
        """
        Calls on_cap_reached(standing) once, when the call's standing turns `allowed: false` (its per-call
        cap reached, or a blocking budget of its scope spent). The standing is read after this client's
        usage of the call was acknowledged, at most every cap_check_interval seconds, on a thread of its own
        (where the callback runs): never in the way of usage, and a failed read is logged and retried. It
        stops once the callback ran, or at end_session() or unwatch_cap().
        """
        self._caps.watch(session_id, on_cap_reached)

    def unwatch_cap(self, session_id: str) -> None:
        """Stops watching the call's cap (end_session() does it too)."""
        self._caps.unwatch(session_id)

    def _read_budget(self, session_id: str) -> SessionBudget:
        """One read of the standing for the watch: a failure raises, and the watch retries it later."""
        path = f"/api/sessions/{session_id}/budget"
        response = self._http.get(path)
        if response.status_code != 200:
            raise CallmeterError(f"GET {path}: {response.status_code} {_detail(response)}", response.status_code)
        return SessionBudget.from_answer(response.json())

    def _call(self, method: str, path: str, body: Any) -> dict[str, Any]:
        backoff = Backoff(*self._backoff)
        last: str = ""
        for _ in range(self._session_attempts):
            response: httpx.Response | None = None
            try:
                response = self._http.request(method, path, json=body)
                if response.status_code < 300:
                    return response.json()
                if not _retryable(response):
                    detail = _detail(response)
                    raise CallmeterError(f"{method} {path}: {response.status_code} {detail}", response.status_code, detail)
                last = f"{response.status_code}"
            except httpx.TransportError as error:
                last = repr(error)
            time.sleep(backoff.next_delay(response))
        raise CallmeterError(f"{method} {path}: no answer after {self._session_attempts} attempts ({last})")

    # -- the sender thread -----------------------------------------------------------------------

    def _run(self) -> None:
        last_send = time.monotonic()
        while True:
            with self._wake:
                due = last_send + self._flush_interval
                while (
                    not self._closing
                    and self._flush_requested == self._flushed
                    and len(self._pending) < self._batch_size
                    and time.monotonic() < due
                ):
                    self._wake.wait(max(0.0, due - time.monotonic()))
                ticket = self._flush_requested
                # Woken by a full batch alone, only full batches go: the rest waits for its interval.
                everything = self._closing or ticket != self._flushed or time.monotonic() >= due
            drained = self._drain(everything)
            if everything:
                last_send = time.monotonic()
            with self._wake:
                if drained and everything:
                    self._flushed = max(self._flushed, ticket)
                self._wake.notify_all()
                if self._closing:
                    return

    def _drain(self, everything: bool) -> bool:
        """Sends full batches (and what is left, when `everything`); False if the client closed first."""
        least = 1 if everything else self._batch_size
        while len(self._pending) >= least:
            if not self._send_one_batch(give_up=lambda: self._closing):
                return False
        return True

    def _send_one_batch(self, give_up: Callable[[], bool]) -> bool:
        """
        Sends the oldest events until the server took each or refused it for what it holds (then it is
        a dead letter); False if the client closed first. Everything else keeps them and waits.
        """
        batch = self._pending.oldest(self._batch_size)
        size = len(batch)
        backoff = Backoff(*self._backoff)
        held = Backoff(self._backoff[0], self._auth_backoff_cap)
        while batch:
            part = batch[:size]
            response: httpx.Response | None = None
            try:
                response = self._http.post(BATCH_PATH, json=[body for _, body in part])
            except httpx.TransportError as error:
                # Also a timeout after the server may have stored it: the same ids go again.
                self.retry_count += 1
                log.warning("callmeter: batch not answered (%r), retrying with the same event ids", error)
                delay = backoff.next_delay(None)
            else:
                status = response.status_code
                if status == 200:
                    if self._settle(part, response.json()):
                        self._auth_recovered()
                        batch = batch[len(part) :]
                        continue
                    # Items held (forbidden for this credential): with whatever came since, after a wait.
                    batch = self._pending.oldest(self._batch_size)
                    size = len(batch)
                    delay = held.next_delay(None)
                elif status in AUTH:
                    self._auth_failed(status, _detail(response))
                    delay = held.next_delay(response)
                elif _retryable(response):
                    self.retry_count += 1
                    log.warning("callmeter: batch answered %s, retrying", status)
                    delay = backoff.next_delay(response)
                elif status in SPLIT and len(part) > 1:
                    size = max(1, len(part) // 2)
                    continue
                elif status in SPLIT:
                    (seq, body), detail = part[0], _detail(response)
                    if not self._dead([(seq, body, status, detail)]):
                        delay = held.next_delay(None)
                    else:
                        batch = batch[1:]
                        continue
                else:
                    self.retry_count += 1
                    log.error(
                        "callmeter: %s %s answered %s (%s); the %d events are kept and retried: is base_url right?",
                        "POST", BATCH_PATH, status, _detail(response), len(part),
                    )
                    delay = held.next_delay(response)
            if not self._wait(delay, give_up):
                return False
        return True

    def _wait(self, delay: float, give_up: Callable[[], bool]) -> bool:
        """Waits out a backoff (new events do not cut it short; set_api_key does); False if the client closed."""
        until = time.monotonic() + delay
        with self._wake:
            while not give_up() and not self._retry_now and time.monotonic() < until:
                self._wake.wait(until - time.monotonic())
            self._retry_now = False
            return not give_up()

    def _settle(self, part: list[tuple[int, dict[str, Any]]], answers: list[dict[str, Any]]) -> bool:
        """Removes what the answer settled; True unless some items are held for the credential's rights."""
        by_index = {answer.get("index"): answer for answer in answers}
        done: list[int] = []
        dead: list[tuple[int, dict[str, Any], int | None, Any]] = []
        forbidden: list[Any] = []
        for index, (seq, body) in enumerate(part):
            answer = by_index.get(index)
            outcome = None if answer is None else answer.get("status")
            if outcome in ("accepted", "duplicate"):
                done.append(seq)
            elif outcome == "rejected" and _forbidden(answer.get("errors")):
                forbidden.append(answer.get("errors"))
            elif outcome == "rejected":
                dead.append((seq, body, None, answer.get("errors")))
            # No answer for an item: it stays and goes again under its id.
        self.sent_count += len(done)
        self._pending.remove(done)
        settled = set(done)
        self._caps.sent(body["session_id"] for seq, body in part if seq in settled)
        kept = self._dead(dead)
        if forbidden:
            self._auth_failed(403, forbidden[0])
        return kept and not forbidden and len(done) + len(dead) == len(part)

    def _dead(self, items: list[tuple[int, dict[str, Any], int | None, Any]]) -> bool:
        """Moves refused events to the dead letters, then out of the queue; False (all kept queued) if that failed."""
        if not items:
            return True
        letters = [dead_letter(body, status, errors) for _, body, status, errors in items]
        try:
            if self._dead_letters is not None:
                self._dead_letters.add(letters)
            else:
                self._memory_dead_letters.extend(letters)
        except OSError as error:
            log.error("callmeter: could not write the dead letters (%r); the %d refused events stay queued", error, len(items))
            return False
        for _, body, status, errors in items:
            self.rejected_count += 1
            where = self._dead_letters.path if self._dead_letters is not None else "memory"
            log.warning(
                "callmeter: usage event %s refused (%s): %s; kept in the dead letters (%s)",
                body.get("event_id"), status or "item", errors, where,
            )
            if self._on_rejected is not None:
                try:
                    self._on_rejected(Rejected(body=body, errors=errors, status=status))
                except Exception:  # a callback's failure must not stop the sender
                    log.exception("callmeter: on_rejected raised")
        self._pending.remove([seq for seq, _, _, _ in items])
        return True

    def _auth_failed(self, status: int, detail: Any) -> None:
        self.auth_error_count += 1
        pending = len(self._pending)
        if self._auth_failing:
            log.warning("callmeter: credentials still refused (%s %s); %d usage events kept", status, detail, pending)
            return
        self._auth_failing = True
        log.error(
            "callmeter: the server refused the API key (%s %s); the %d usage events are kept%s and retried "
            "every %g s at most until the key is fixed (set_api_key(), or a restart with the right key)",
            status, detail, pending, " in the spool" if isinstance(self._pending, SpoolPending) else " in memory",
            self._auth_backoff_cap,
        )
        if self._on_auth_error is not None:
            try:
                self._on_auth_error(AuthError(status=status, detail=detail, pending=pending))
            except Exception:  # a callback's failure must not stop the sender
                log.exception("callmeter: on_auth_error raised")

    def _auth_recovered(self) -> None:
        if self._auth_failing:
            self._auth_failing = False
            log.warning("callmeter: the server takes the credentials again; sending the kept usage events")


def _detail(response: httpx.Response) -> Any:
    try:
        return response.json().get("detail")
    except Exception:
        return response.text[:500]


__all__ = ["AuthError", "Callmeter", "CallmeterError", "QueueFull", "Rejected", "SessionBudget"]
