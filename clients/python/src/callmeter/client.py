"""The callmeter client: sessions, and usage events batched, retried and counted once."""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

import httpx

from ._pending import MemoryPending, Pending, QueueFull, SpoolPending
from ._records import usage_body

log = logging.getLogger("callmeter")

BATCH_PATH = "/api/usage/events/batch"
MAX_BATCH = 1000  # the server's bound on one batch


@dataclass(frozen=True)
class Rejected:
    """An event the server refused for what it holds (a 4xx): reported, never sent again."""

    body: dict[str, Any]
    errors: Any


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
    and resends an unanswered batch with the same event ids, which the server counts once.
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
        backoff_base: float = 0.25,
        backoff_cap: float = 10.0,
        session_attempts: int = 8,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be 1 to {MAX_BATCH}")
        headers = {"user-agent": "callmeter-python/0.1.0"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        self._pending: Pending = SpoolPending(spool_dir) if spool_dir else MemoryPending(max_queue)
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._on_rejected = on_rejected
        self._backoff = (backoff_base, backoff_cap)
        self._session_attempts = session_attempts
        self._wake = threading.Condition()
        self._flush_requested = 0
        self._flushed = 0
        self._closing = False
        self.rejected_count = 0
        self.sent_count = 0
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
        left = len(self._pending)
        if left and not isinstance(self._pending, SpoolPending):
            log.error("callmeter: %d usage events were not sent before close; they are lost", left)
        elif left:
            log.warning("callmeter: %d usage events stay in the spool for the next start", left)
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
        """Ends the session (COMPLETED or FAILED)."""
        return self._call("PATCH", f"/api/sessions/{session_id}", {"status": status})

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
        """Sends the oldest events until the server answers for them; False if the client closed first."""
        batch = self._pending.oldest(self._batch_size)
        bodies = [body for _, body in batch]
        backoff = Backoff(*self._backoff)
        while True:
            response: httpx.Response | None = None
            try:
                response = self._http.post(BATCH_PATH, json=bodies)
                if response.status_code == 200:
                    self._settle(batch, response.json())
                    return True
                if not _retryable(response):
                    # The batch as a whole is refused (e.g. 401, 403, 413): no resend can change that.
                    detail = _detail(response)
                    self._reject([(seq, body, {"status": response.status_code, "detail": detail}) for seq, body in batch])
                    return True
                log.warning("callmeter: batch answered %s, retrying", response.status_code)
            except httpx.TransportError as error:
                # Also a timeout after the server may have stored it: the same ids go again.
                log.warning("callmeter: batch not answered (%r), retrying with the same event ids", error)
            delay = backoff.next_delay(response)
            with self._wake:
                if give_up():
                    return False
                self._wake.wait(delay)
                if give_up():
                    return False

    def _settle(self, batch: list[tuple[int, dict[str, Any]]], answers: list[dict[str, Any]]) -> None:
        by_index = {answer["index"]: answer for answer in answers}
        rejected = []
        for index, (seq, body) in enumerate(batch):
            answer = by_index.get(index)
            if answer is not None and answer.get("status") == "rejected":
                rejected.append((seq, body, answer.get("errors")))
        self._reject(rejected)
        self.sent_count += len(batch) - len(rejected)
        self._pending.remove([seq for seq, _ in batch])

    def _reject(self, items: list[tuple[int, dict[str, Any], Any]]) -> None:
        for _, body, errors in items:
            self.rejected_count += 1
            log.warning("callmeter: usage event %s rejected: %s", body.get("event_id"), errors)
            if self._on_rejected is not None:
                try:
                    self._on_rejected(Rejected(body=body, errors=errors))
                except Exception:  # a callback's failure must not stop the sender
                    log.exception("callmeter: on_rejected raised")
        self._pending.remove([seq for seq, _, _ in items])


def _detail(response: httpx.Response) -> Any:
    try:
        return response.json().get("detail")
    except Exception:
        return response.text[:500]


__all__ = ["Callmeter", "CallmeterError", "QueueFull", "Rejected"]
