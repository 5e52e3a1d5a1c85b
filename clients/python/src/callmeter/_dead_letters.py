"""
Dead letters: usage events the server refused for what they hold, kept in a JSON-lines file beside the
spool until `callmeter dead-letters resend` gets them accepted. The TypeScript client writes the same
file in the same way, so the one command serves both.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Iterator

DEAD_LETTER_FILE = "callmeter-dead-letters.jsonl"

# A lock is a directory made beside the file (mkdir is atomic everywhere, and Node has no flock, so the
# TypeScript client can take the same lock): a holder keeps it for one read or write, so a lock older
# than this was left by a process that died holding it.
LOCK_STALE_S = 30.0
LOCK_WAIT_S = 10.0


def now_text() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def dead_letter(body: dict[str, Any], status: int | None, errors: Any) -> dict[str, Any]:
    """One line of the file: the event as it was sent, and what the server said of it."""
    return {"event_id": body.get("event_id"), "refused_at": now_text(), "status": status, "errors": errors, "body": body}


class DeadLetterFile:
    def __init__(self, path: str) -> None:
        self.path = path
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        lock = f"{self.path}.lock"
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                os.mkdir(lock)
                break
            except FileExistsError:
                try:
                    if time.time() - os.stat(lock).st_mtime > LOCK_STALE_S:
                        os.rmdir(lock)
                        continue
                except FileNotFoundError:
                    continue
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{lock} is held by another process") from None
                time.sleep(0.01)
        try:
            yield
        finally:
            os.rmdir(lock)

    def read(self) -> list[dict[str, Any]]:
        """Every dead letter, oldest first. A line cut short by a crash mid-write is skipped."""
        try:
            with open(self.path, encoding="utf-8") as file:
                lines = file.read().splitlines()
        except FileNotFoundError:
            return []
        letters = []
        for line in lines:
            try:
                letters.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return letters

    def add(self, letters: list[dict[str, Any]]) -> None:
        """Appends (on disk before it returns); an event already there is not written twice."""
        if not letters:
            return
        with self._locked():
            have = {letter.get("event_id") for letter in self.read()}
            fresh = [letter for letter in letters if letter["event_id"] not in have]
            if not fresh:
                return
            with open(self.path, "a", encoding="utf-8") as file:
                file.write("".join(json.dumps(letter, separators=(",", ":")) + "\n" for letter in fresh))
                file.flush()
                os.fsync(file.fileno())

    def settle(self, accepted: set[str], refused_again: dict[str, dict[str, Any]]) -> None:
        """Drops the accepted events and replaces the refused-again ones by their new answer."""
        with self._locked():
            kept = []
            for letter in self.read():
                event_id = letter.get("event_id")
                if event_id in accepted:
                    continue
                kept.append(refused_again.get(event_id, letter))
            temporary = f"{self.path}.tmp"
            with open(temporary, "w", encoding="utf-8") as file:
                file.write("".join(json.dumps(letter, separators=(",", ":")) + "\n" for letter in kept))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)

    def __len__(self) -> int:
        return len(self.read())
