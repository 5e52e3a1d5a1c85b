"""`callmeter dead-letters`: the refused events a worker kept, listed and sent again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from callmeter import Callmeter
from callmeter._dead_letters import DeadLetterFile
from conftest import usage

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "callmeter", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def refused_three(server, spool: Path) -> list[str]:
    """Five events, of which the server refuses quantities 2, 3 and 4 (as late usage is refused)."""
    server.reject = lambda body: body["quantity"] in (2, 3, 4)
    client = Callmeter(server.url, batch_size=10, flush_interval=60, spool_dir=str(spool))
    ids = [client.record(**usage(i)) for i in range(5)]
    assert client.close()
    assert client.rejected_count == 3
    return ids


def test_the_package_installs_the_callmeter_command():
    scripts = tomllib.loads(PYPROJECT.read_text())["project"]["scripts"]
    assert scripts["callmeter"] == "callmeter.cli:main"


def test_list_shows_each_dead_letter_with_its_reason(server, tmp_path):
    ids = refused_three(server, tmp_path)
    listed = cli("dead-letters", "list", "--spool-dir", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ids[1:4]
    assert all("no" in line and "stt_minutes" in line for line in lines)
    assert "3 dead letter(s)" in listed.stderr
    as_json = cli("dead-letters", "list", "--json", env={"CALLMETER_SPOOL_DIR": str(tmp_path)})
    assert [json.loads(line)["body"]["quantity"] for line in as_json.stdout.splitlines()] == [2, 3, 4]


def test_resend_removes_the_accepted_and_keeps_the_refused_again_counted_once(server, tmp_path):
    ids = refused_three(server, tmp_path)
    # What refused 2 and 3 is fixed on the server; 4 is still refused.
    server.reject = lambda body: body["quantity"] == 4
    named = cli("dead-letters", "resend", "--spool-dir", str(tmp_path), "--base-url", server.url, ids[1][:8], ids[3])
    assert named.returncode == 1, named.stderr
    assert "1 accepted (removed), 1 refused again (kept)" in named.stdout
    letters = DeadLetterFile(str(tmp_path / "callmeter-dead-letters.jsonl"))
    assert [letter["event_id"] for letter in letters.read()] == [ids[2], ids[3]]
    everything = cli("dead-letters", "resend", "--all", "--spool-dir", str(tmp_path), env={"CALLMETER_URL": server.url})
    assert everything.returncode == 1
    assert "1 accepted (removed), 1 refused again (kept)" in everything.stdout
    assert [letter["event_id"] for letter in letters.read()] == [ids[3]]
    server.reject = lambda body: False
    last = cli("dead-letters", "resend", "--all", "--spool-dir", str(tmp_path), "--base-url", server.url)
    assert last.returncode == 0 and letters.read() == []
    # Each event stored once: the first two at the first send, the others by the resends.
    assert sorted(server.stored) == sorted(ids)
    assert sum(len(batch) for batch in server.batches) == 5 + 2 + 2 + 1


def test_resend_with_a_refused_key_changes_nothing_and_says_why(server, tmp_path):
    ids = refused_three(server, tmp_path)
    server.reject = lambda body: False
    server.refused_keys.add("cm_live_old")
    before = (tmp_path / "callmeter-dead-letters.jsonl").read_text()
    run = cli("dead-letters", "resend", "--all", "--spool-dir", str(tmp_path), "--base-url", server.url, "--api-key", "cm_live_old")
    assert run.returncode == 2
    assert "401" in run.stderr and "--api-key" in run.stderr
    assert (tmp_path / "callmeter-dead-letters.jsonl").read_text() == before
    assert ids[1] not in server.stored


def test_resend_refuses_an_ambiguous_or_unknown_id(server, tmp_path):
    refused_three(server, tmp_path)
    run = cli("dead-letters", "resend", "--spool-dir", str(tmp_path), "--base-url", server.url, "00000000")
    assert run.returncode == 2 and "names 0 dead letters" in run.stderr
    neither = cli("dead-letters", "resend", "--spool-dir", str(tmp_path), "--base-url", server.url)
    assert neither.returncode == 2 and "--all" in neither.stderr
