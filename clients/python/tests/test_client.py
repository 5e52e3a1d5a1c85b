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
from callmeter._dead_letters import DeadLetterFile
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


def _conflict(body):
    return body["quantity"] == 2


def test_refused_items_go_to_the_dead_letter_file_and_never_leave_unkept(server, tmp_path):
    # Three events in the spool; the server refuses one (as a late usage's 409 is answered in a batch).
    server.reject = _conflict
    reported = []
    client = Callmeter(server.url, batch_size=3, flush_interval=60, spool_dir=str(tmp_path), on_rejected=reported.append)
    ids = [client.record(**usage(i)) for i in range(3)]
    assert client.flush(10)
    assert [r.body["quantity"] for r in reported] == [2]
    assert reported[0].errors == [{"msg": "no"}] and reported[0].status is None
    assert client.rejected_count == 1 and client.sent_count == 2 and client.pending == 0
    assert len(server.batches) == 1
    letters = DeadLetterFile(str(tmp_path / "callmeter-dead-letters.jsonl")).read()
    assert [letter["event_id"] for letter in letters] == [ids[1]]
    assert letters[0]["body"]["quantity"] == 2 and letters[0]["errors"] == [{"msg": "no"}]
    assert client.dead_letter_count == 1
    assert set(server.stored) == {ids[0], ids[2]}
    client.close()


def test_a_refused_key_keeps_every_spooled_event_and_sends_them_once_the_key_is_fixed(server, tmp_path):
    server.refused_keys.add("cm_live_mistyped")
    auth_errors = []
    client = Callmeter(
        server.url,
        "cm_live_mistyped",
        batch_size=100,
        flush_interval=60,
        spool_dir=str(tmp_path),
        backoff_base=0.01,
        auth_backoff_cap=0.2,
        on_auth_error=auth_errors.append,
    )
    ids = [client.record(**usage(i)) for i in range(250)]
    assert not client.flush(0.3)
    assert client.pending == 250
    assert client.rejected_count == 0 and client.auth_error_count >= 1
    assert len(auth_errors) == 1 and auth_errors[0].status == 401 and 100 <= auth_errors[0].pending <= 250
    assert auth_errors[0].detail == "Invalid API key"
    assert not (tmp_path / "callmeter-dead-letters.jsonl").exists()
    client.set_api_key("cm_live_right")
    assert client.flush(20)
    assert client.pending == 0 and client.sent_count == 250
    assert set(server.stored) == set(ids)
    assert server.headers[-1]["authorization"] == "Bearer cm_live_right"
    assert client.stats()["auth_errors"] == client.auth_error_count == len(server.batches) - 3
    client.close()


def test_a_restarted_worker_sends_what_a_refused_key_left_in_the_spool(server, tmp_path):
    server.refused_keys.add("revoked")
    client = Callmeter(server.url, "revoked", batch_size=10, flush_interval=60, spool_dir=str(tmp_path))
    ids = [client.record(**usage(i)) for i in range(3)]
    assert not client.close(timeout=0.5)
    again = Callmeter(server.url, "fixed", spool_dir=str(tmp_path), flush_interval=60)
    assert again.pending == 3
    assert again.close()
    assert set(server.stored) == set(ids)


def test_forbidden_items_are_held_like_a_refused_key_and_the_others_leave(server, tmp_path):
    server.item_answers = lambda body: (
        {"status": "rejected", "errors": [{"type": "forbidden", "loc": ["body", 0, "user_id"], "msg": "Forbidden"}]}
        if body["user_id"] == "other" and not server.fixed
        else None
    )
    server.fixed = False
    auth_errors = []
    client = Callmeter(
        server.url, batch_size=10, flush_interval=60, spool_dir=str(tmp_path), backoff_base=0.01,
        auth_backoff_cap=0.05, on_auth_error=auth_errors.append,
    )
    mine = client.record(**usage(0))
    theirs = client.record(**usage(1, user_id="other"))
    assert not client.flush(0.5)
    assert client.pending == 1 and mine in server.stored and theirs not in server.stored
    assert len(auth_errors) == 1 and auth_errors[0].status == 403
    server.fixed = True
    assert client.flush(10)
    assert theirs in server.stored and client.rejected_count == 0
    client.close()


def test_a_batch_refused_whole_for_its_size_is_split_and_only_the_refused_event_is_dead(server, tmp_path):
    server.too_large = lambda bodies: any(b["quantity"] == 3 for b in bodies)
    client = Callmeter(server.url, batch_size=8, flush_interval=60, spool_dir=str(tmp_path))
    ids = [client.record(**usage(i)) for i in range(8)]
    assert client.flush(10)
    assert set(server.stored) == set(ids) - {ids[2]}
    letters = DeadLetterFile(str(tmp_path / "callmeter-dead-letters.jsonl")).read()
    assert [(letter["event_id"], letter["status"]) for letter in letters] == [(ids[2], 413)]
    client.close()


def test_a_whole_batch_404_is_held_not_dead(server, tmp_path):
    server.script.append((404, {}, {"detail": "Not Found"}))
    client = Callmeter(server.url, batch_size=5, flush_interval=60, spool_dir=str(tmp_path), backoff_base=0.01, auth_backoff_cap=0.05)
    ids = [client.record(**usage(i)) for i in range(5)]
    assert client.flush(10)
    assert set(server.stored) == set(ids) and client.rejected_count == 0 and client.retry_count == 1
    client.close()


def test_without_a_spool_dead_letters_stay_in_memory(server):
    server.reject = _conflict
    client = Callmeter(server.url, batch_size=3, flush_interval=60)
    ids = [client.record(**usage(i)) for i in range(3)]
    assert client.flush(10)
    assert [letter["event_id"] for letter in client.dead_letters()] == [ids[1]]
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
