"""
A small real HTTP server standing in for callmeter's batch route, scripted per test; and callmeter itself,
embedded, for the tests that need its prices.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parents[3]

# What the server does with the next batch: None answers every item accepted (duplicate when seen);
# a tuple (status, headers, body) answers that; "hang" stores the batch and answers after `hang_s`.
Script = Any


class BatchServer:
    def __init__(self) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.patches: list[tuple[str, dict[str, Any]]] = []
        self.stored: dict[str, dict[str, Any]] = {}
        self.script: deque[Script] = deque()
        self.reject: Callable[[dict[str, Any]], bool] = lambda body: False
        self.hang_s = 2.0
        # Per item: None for the usual answer, else the answer's status and errors.
        self.item_answers: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda body: None
        # A whole batch answered 413 (as a body over the server's limit is).
        self.too_large: Callable[[list[dict[str, Any]]], bool] = lambda bodies: False
        self.headers: list[dict[str, str]] = []
        self.fixed = False
        # Bearer keys answered 401, as a revoked or mistyped key is.
        self.refused_keys: set[str] = set()
        # GET /api/sessions/{id}/budget: the paths read, and the answers, in turn: (status, body), or "hang"
        # (answers 200 allowed after hang_s); the last answer stays once the others are used.
        self.budget_reads: list[str] = []
        self.budget_answers: deque[Script] = deque()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                if self.path == "/api/sessions/":
                    self.answer(201, {"id": "00000000-0000-4000-8000-000000000001", **body})
                    return
                server.batches.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.headers.get("authorization", "").removeprefix("Bearer ") in server.refused_keys:
                    self.answer(401, {"detail": "Invalid API key"})
                    return
                if server.too_large(body):
                    self.answer(413, {"detail": "Request body too large"})
                    return
                step = server.script.popleft() if server.script else None
                if isinstance(step, tuple):
                    status, headers, answer = step
                    self.answer(status, answer, headers)
                    return
                answers = server.settle(body)
                if step == "hang":
                    time.sleep(server.hang_s)
                self.answer(200, answers)

            def do_GET(self) -> None:  # noqa: N802
                server.budget_reads.append(self.path)
                if not server.budget_answers:
                    self.answer(404, {"detail": "Not Found"})
                    return
                step = server.budget_answers.popleft() if len(server.budget_answers) > 1 else server.budget_answers[0]
                if step == "hang":
                    time.sleep(server.hang_s)
                    step = (200, standing(self.path.split("/")[3], allowed=True))
                status, answer = step
                self.answer(status, answer)

            def do_PATCH(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                server.patches.append((self.path, body))
                self.answer(200, {"id": self.path.rsplit("/", 1)[-1], **body})

            def answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def settle(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = []
        for index, body in enumerate(bodies):
            special = self.item_answers(body)
            if special is not None:
                answers.append({"index": index, "id": None, **special})
            elif self.reject(body):
                answers.append({"index": index, "id": None, "status": "rejected", "errors": [{"msg": "no"}]})
            elif body["event_id"] in self.stored:
                answers.append({"index": index, "id": body["event_id"], "status": "duplicate"})
            else:
                self.stored[body["event_id"]] = body
                answers.append({"index": index, "id": body["event_id"], "status": "accepted"})
        return answers

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def server():
    batch_server = BatchServer()
    yield batch_server
    batch_server.close()


def standing(session_id: str, *, allowed: bool, spent: str = "0.0123", cap: str | None = "0.05") -> dict[str, Any]:
    """An answer of GET /api/sessions/{id}/budget."""
    remaining = None if cap is None else ("0" if not allowed else "0.0377")
    budget_id = None if cap is None else "00000000-0000-4000-8000-0000000000b1"
    return {
        "session_id": session_id,
        "allowed": allowed,
        "spent": spent,
        "cap": cap,
        "remaining": remaining,
        "budget_id": budget_id,
    }


def usage(i: int, **extra: Any) -> dict[str, Any]:
    """The fields of one simple usage event."""
    return {
        "session_id": "00000000-0000-4000-8000-000000000001",
        "user_id": "user-1",
        "provider": "deepgram",
        "event_type": "stt_minutes",
        "quantity": i + 1,
        **extra,
    }


class EmbeddedCallmeter:
    """
    callmeter as `npm start` runs it (services/main.ts: the on-disk journal and the embedded ClickHouse),
    in its own data directory, with authentication off, as test/support/callmeter-process.ts starts it.
    """

    def __init__(self, data_dir: Path) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is not on PATH: the embedded callmeter cannot start")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.log = data_dir / "callmeter.log"
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", ""),
            "UV_THREADPOOL_SIZE": "8",
            "DATA_DIR": str(data_dir),
            "LOG_LEVEL": "warn",
            "PORT": str(port),
            "HOST": "127.0.0.1",
        }
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [node, "--max-semi-space-size=64", "--import", "tsx", "services/main.ts"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def wait_until_up(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"callmeter exited with {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"callmeter did not answer /healthz within {timeout} s: {self.log.read_text()[-2000:]}")

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as answer:
            return json.loads(answer.read())

    def post(self, path: str, body: Any) -> Any:
        request = urllib.request.Request(
            f"{self.url}{path}", data=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def callmeter(tmp_path_factory):
    """The embedded callmeter, one per test module."""
    process = EmbeddedCallmeter(tmp_path_factory.mktemp("callmeter-data"))
    try:
        process.wait_until_up()
        yield process
    finally:
        process.stop()
