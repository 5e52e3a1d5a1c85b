"""The per-call cap watch: once per call, at most every interval, and never in the way of usage."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from decimal import Decimal
from typing import Any

import httpx
import pytest
from conftest import standing, usage

from callmeter import AsyncCallmeter, Callmeter, SessionBudget
from callmeter._caps import SETTLE_S, CapWatcher

CALL = "00000000-0000-4000-8000-000000000001"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Standings:
    """A fake read of the standing: answers (a SessionBudget or an exception to raise) in turn, the last repeated."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.reads: list[str] = []

    def __call__(self, session_id: str) -> SessionBudget:
        self.reads.append(session_id)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer


def budget(allowed: bool, session_id: str = CALL) -> SessionBudget:
    return SessionBudget.from_answer(standing(session_id, allowed=allowed))


def test_the_standing_is_read_exactly_as_decimals_never_floats():
    parsed = SessionBudget.from_answer(standing(CALL, allowed=False, spent="0.050000000000000001", cap="0.05"))
    assert parsed.spent == Decimal("0.050000000000000001") and parsed.cap == Decimal("0.05")
    assert parsed.remaining == Decimal(0) and parsed.budget_id is not None
    uncapped = SessionBudget.from_answer(standing(CALL, allowed=True, cap=None))
    assert (uncapped.cap, uncapped.remaining, uncapped.budget_id) == (None, None, None)


def test_the_callback_runs_once_when_the_call_is_no_longer_allowed_and_the_call_is_then_forgotten():
    clock, fetch, fired = Clock(), Standings(budget(True), budget(False)), []
    watcher = CapWatcher(fetch, interval=2.0, clock=clock, background=False)
    watcher.watch(CALL, fired.append)
    assert watcher.check_due() is None and fetch.reads == []  # nothing sent yet: nothing read
    watcher.sent([CALL, CALL])
    watcher.check_due()
    assert (len(fetch.reads), fired) == (1, [])  # allowed
    clock.now += 1.0
    watcher.sent([CALL])
    assert watcher.check_due() == pytest.approx(1.0)  # at most every interval
    assert len(fetch.reads) == 1
    clock.now += 1.0
    watcher.check_due()
    assert len(fetch.reads) == 2 and fired == [budget(False)]
    for _ in range(3):  # more usage of the call: no read, no second call
        clock.now += 5.0
        watcher.sent([CALL])
        watcher.check_due()
    assert len(fetch.reads) == 2 and len(fired) == 1
    watcher.close()


def test_reads_stop_once_a_read_started_settle_s_after_the_last_usage():
    clock, fetch = Clock(), Standings(budget(True))
    watcher = CapWatcher(fetch, interval=0.5, clock=clock, background=False)
    watcher.watch(CALL, lambda _: None)
    watcher.sent([CALL])
    for _ in range(20):
        watcher.check_due()
        clock.now += 0.5
    # At 0, 0.5, ... up to the first read at SETTLE_S after the usage: then nothing until new usage.
    assert len(fetch.reads) == int(SETTLE_S / 0.5) + 1
    watcher.sent([CALL])
    watcher.check_due()
    assert len(fetch.reads) == int(SETTLE_S / 0.5) + 2
    watcher.close()


def test_a_failed_read_is_logged_and_retried_at_the_next_interval_and_a_raising_callback_is_contained(caplog):
    failures = [httpx.ConnectError("refused"), RuntimeError("GET: 503")]
    clock, fetch = Clock(), Standings(*failures, budget(False))
    watcher = CapWatcher(fetch, interval=2.0, clock=clock, background=False)
    fired: list[SessionBudget] = []

    def raising(standing: SessionBudget) -> None:
        raise ValueError("the worker's own bug")

    watcher.watch(CALL, raising)
    watcher.watch(CALL, fired.append)
    watcher.sent([CALL])
    with caplog.at_level(logging.DEBUG, logger="callmeter"):
        watcher.check_due()
        assert watcher.check_due() == pytest.approx(2.0)  # not again at once
        clock.now += 2.0
        watcher.check_due()
        clock.now += 2.0
        watcher.check_due()
    assert len(fetch.reads) == 3 and fired == [budget(False)]
    messages = [record.getMessage() for record in caplog.records]
    assert sum("could not be read" in message for message in messages) == 2
    assert any("on_cap_reached raised" in message for message in messages)
    watcher.close()


def test_an_ended_call_is_read_no_more():
    clock, fetch = Clock(), Standings(budget(False))
    watcher = CapWatcher(fetch, interval=2.0, clock=clock, background=False)
    fired: list[SessionBudget] = []
    watcher.watch(CALL, fired.append)
    watcher.unwatch(CALL)
    watcher.sent([CALL])
    watcher.check_due()
    assert (fetch.reads, fired) == ([], [])
    watcher.close()


def test_without_a_watch_the_client_reads_no_standing(server):
    with Callmeter(server.url, flush_interval=0.05) as client:
        for i in range(5):
            client.record(**usage(i))
        assert client.flush(5)
        time.sleep(0.3)
        assert client.stats()["cap_checks"] == 0
    assert server.budget_reads == [] and len(server.stored) == 5


def test_the_watch_tells_the_worker_once_through_failures_and_a_slow_read_never_holds_up_usage(server):
    server.hang_s = 3.0
    server.budget_answers.extend(["hang", (503, {"detail": "unavailable"}), (200, standing(CALL, allowed=False))])
    fired: list[tuple[SessionBudget, str]] = []
    once = threading.Event()

    def on_cap_reached(standing: SessionBudget) -> None:
        fired.append((standing, threading.current_thread().name))
        once.set()

    with Callmeter(server.url, flush_interval=0.05, cap_check_interval=0.2) as client:
        client.watch_cap(CALL, on_cap_reached)
        client.record(**usage(0))
        assert client.flush(5)
        # The first read hangs for 3 s: usage goes on being sent meanwhile.
        time.sleep(0.3)
        started = time.monotonic()
        for i in range(1, 4):
            client.record(**usage(i))
        assert client.flush(5)
        assert time.monotonic() - started < 1.5
        assert once.wait(15)
        for i in range(4, 8):  # the cap was told: further usage reads nothing
            client.record(**usage(i))
        assert client.flush(5)
        time.sleep(0.5)
        reads = len(server.budget_reads)
    assert len(server.stored) == 8
    assert reads == 3 and set(server.budget_reads) == {f"/api/sessions/{CALL}/budget"}
    assert [(s.allowed, s.spent, s.cap, thread) for s, thread in fired] == [
        (False, Decimal("0.0123"), Decimal("0.05"), "callmeter-caps")
    ]


def test_session_budget_reads_the_standing_and_end_session_stops_the_watch(server):
    server.budget_answers.append((200, standing(CALL, allowed=True)))
    with Callmeter(server.url, flush_interval=0.05, cap_check_interval=0.1) as client:
        answer = client.session_budget(CALL)
        assert (answer.allowed, answer.remaining) == (True, Decimal("0.0377"))
        client.watch_cap(CALL, lambda _: None)
        client.end_session(CALL)
        client.record(**usage(0))
        assert client.flush(5)
        time.sleep(0.3)
    assert server.budget_reads == [f"/api/sessions/{CALL}/budget"]


async def test_the_async_client_runs_a_coroutine_callback_on_its_loop(server):
    server.budget_answers.append((200, standing(CALL, allowed=False)))
    loop = asyncio.get_running_loop()
    told: asyncio.Future[tuple[SessionBudget, bool]] = loop.create_future()

    async def on_cap_reached(standing: SessionBudget) -> None:
        told.set_result((standing, asyncio.get_running_loop() is loop))

    async with AsyncCallmeter(server.url, flush_interval=0.05, cap_check_interval=0.1) as client:
        client.watch_cap(CALL, on_cap_reached)
        client.record(**usage(0))
        standing_told, on_loop = await asyncio.wait_for(told, 10)
    assert on_loop and standing_told.allowed is False and standing_told.session_id == CALL
