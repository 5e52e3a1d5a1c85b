"""The client core against a real HTTP server: batches, ids, retries, rejections, bounds, the spool."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import uuid
from decimal import Decimal

import pytest

from callmeter import AsyncCallmeter, Callmeter, QueueFull, event_id_for
from callmeter._records import exact, timestamp_text, usage_body
from conftest import usage


def test_event_ids_are_uuid5_of_the_user_and_key_and_random_without_a_key():
    namespace = uuid.uuid5(uuid.NAMESPACE_URL, "https://callmeter.dev/usage-event")
    assert event_id_for("user-1", "k") == str(uuid.uuid5(namespace, "user-1:k"))
    assert event_id_for("user-1", "k") != event_id_for("user-2", "k")
    assert event_id_for("user-1", None) != event_id_for("user-1", None)


def test_quantities_go_exact_never_as_floats():
    assert exact(0.1, "q") == "0.1"
    assert exact(Decimal("1.500"), "q") == "1.5"
    assert exact("2.000", "q") == 2
    assert exact(7, "q") == 7
    assert exact(1e-7, "q") == "0.0000001"
    for bad in (float("nan"), float("inf"), -1, "-0.5", "1e", True, None):
        with pytest.raises((ValueError, TypeError)):
            exact(bad, "q")


def test_a_body_is_complete_at_record_time():
    body = usage_body(
        session_id="s",
        user_id="u",
        provider="openai",
        event_type="llm_tokens",
        model="gpt-4o-mini",
        agent_id=None,
        key="k",
        timestamp=1_800_000_000.5,
        quantities={"quantity": 30, "input_tokens": 20, "output_tokens": 10},
    )
    assert body == {
        "session_id": "s",
        "user_id": "u",
        "provider": "openai",
        "event_type": "llm_tokens",
        "event_id": event_id_for("u", "k"),
        "timestamp": "2027-01-15T08:00:00.500Z",
        "model": "gpt-4o-mini",
        "quantity": 30,
        "input_tokens": 20,
        "output_tokens": 10,
    }
    assert timestamp_text(None).endswith("Z")
    with pytest.raises(ValueError):
        usage_body(**{**_fields(), "quantities": {}})
    with pytest.raises(TypeError):
        usage_body(**{**_fields(), "quantities": {"quantity": 1, "colour": "red"}})


def _fields():
    return dict(
        session_id="s", user_id="u", provider="p", event_type="stt_minutes", model=None, agent_id=None, key=None, timestamp=None
    )


def test_records_go_in_batches_of_batch_size_and_flush_sends_the_rest(server):
    client = Callmeter(server.url, batch_size=100, flush_interval=60)
    ids = [client.record(**usage(i)) for i in range(250)]
    assert client.flush(10)
    assert sorted(len(batch) for batch in server.batches) == [50, 100, 100]
    assert set(server.stored) == set(ids)
    assert client.pending == 0
    assert client.close()


def test_a_retry_after_503_and_429_resends_the_same_ids_after_the_wait(server):
    server.script.extend([(503, {"retry-after": "1"}, {"detail": "x"}), (429, {"retry-after": "0"}, {"detail": "y"})])
    client = Callmeter(server.url, batch_size=10, flush_interval=60, backoff_base=0.01)
    for i in range(10):
        client.record(**usage(i), key=f"k{i}")
    started = time.monotonic()
    assert client.flush(20)
    assert time.monotonic() - started >= 1.0
    assert len(server.batches) == 3
    assert [b["event_id"] for b in server.batches[0]] == [b["event_id"] for b in server.batches[2]]
    assert len(server.stored) == 10
    client.close()


def test_a_batch_stored_but_not_answered_in_time_is_resent_with_the_same_ids_and_counted_once(server):
    server.script.append("hang")
    server.hang_s = 2.0
    client = Callmeter(server.url, batch_size=5, flush_interval=60, timeout=0.5, backoff_base=0.01)
    ids = [client.record(**usage(i)) for i in range(5)]
    assert client.flush(20)
    assert len(server.batches) >= 2
    assert all([b["event_id"] for b in batch] == ids for batch in server.batches)
    assert len(server.stored) == 5
    client.close()


def test_rejected_items_are_reported_once_and_never_resent(server):
    server.reject = lambda body: body["quantity"] == 2
    reported = []
    client = Callmeter(server.url, batch_size=3, flush_interval=60, on_rejected=reported.append)
    for i in range(3):
        client.record(**usage(i))
    assert client.flush(10)
    assert [r.body["quantity"] for r in reported] == [2]
    assert client.rejected_count == 1 and client.pending == 0
    assert len(server.batches) == 1
    # A batch refused as a whole (401) is every item rejected, not retried.
    server.script.append((401, {}, {"detail": "Not authenticated"}))
    client.record(**usage(9))
    assert client.flush(10)
    assert reported[-1].errors == {"status": 401, "detail": "Not authenticated"}
    assert len(server.batches) == 2
    client.close()


def test_memory_is_bounded_without_a_spool():
    client = Callmeter("http://127.0.0.1:9", max_queue=3, batch_size=10, flush_interval=60, timeout=0.2)
    for i in range(3):
        client.record(**usage(i))
    with pytest.raises(QueueFull):
        client.record(**usage(3))
    assert client.pending == 3
    assert not client.close(timeout=0.5)


def test_a_killed_worker_s_spooled_events_go_out_at_the_next_start_under_the_same_ids(server, tmp_path):
    spool = tmp_path / "spool"
    # Records 40 events with the server out of reach, then dies without flushing.
    script = textwrap.dedent(
        f"""
        import os
        from callmeter import Callmeter
        client = Callmeter("http://127.0.0.1:9", spool_dir={str(spool)!r}, flush_interval=60, timeout=0.2)
        for i in range(40):
            client.record(session_id="s", user_id="u", provider="deepgram", event_type="stt_minutes", quantity=1, key=f"k{{i}}")
        os._exit(3)
        """
    )
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert killed.returncode == 3, killed.stderr
    client = Callmeter(server.url, spool_dir=str(spool), flush_interval=60)
    assert client.pending == 40
    assert client.flush(10)
    assert set(server.stored) == {event_id_for("u", f"k{i}") for i in range(40)}
    assert client.close()
    # Nothing is left to send again.
    again = Callmeter(server.url, spool_dir=str(spool))
    assert again.pending == 0
    again.close()


async def test_the_async_client_records_without_blocking_and_flushes_on_aclose(server):
    async with AsyncCallmeter(server.url, batch_size=100, flush_interval=60) as client:
        session = await client.start_session("room", "user-1")
        assert session["id"]
        for i in range(75):
            client.record(**usage(i))
        assert client.pending == 75
    assert len(server.stored) == 75
