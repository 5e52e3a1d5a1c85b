"""Where recorded events wait until the server has answered for them: memory, or an on-disk spool."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import OrderedDict
from typing import Any, Protocol


class QueueFull(RuntimeError):
    """record() refused an event: max_queue events already wait and there is no spool to hold more."""


class Pending(Protocol):
    def add(self, body: dict[str, Any]) -> None: ...

    def oldest(self, limit: int) -> list[tuple[int, dict[str, Any]]]: ...

    def remove(self, seqs: list[int]) -> None: ...

    def __len__(self) -> int: ...

    def close(self) -> None: ...


class MemoryPending:
    """Bounded: past max_queue events, add() raises QueueFull rather than drop one silently."""

    def __init__(self, max_queue: int) -> None:
        self._max = max_queue
        self._items: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._next = 0
        self._lock = threading.Lock()

    def add(self, body: dict[str, Any]) -> None:
        with self._lock:
            if len(self._items) >= self._max:
                raise QueueFull(f"{self._max} usage events are waiting to be sent; give spool_dir= to keep more on disk")
            self._next += 1
            self._items[self._next] = body

    def oldest(self, limit: int) -> list[tuple[int, dict[str, Any]]]:
        with self._lock:
            return [item for _, item in zip(range(limit), self._items.items())]

    def remove(self, seqs: list[int]) -> None:
        with self._lock:
            for seq in seqs:
                self._items.pop(seq, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def close(self) -> None:
        pass


class SpoolPending:
    """
    An SQLite file (WAL): an event is on disk before record() returns and leaves it once the server
    answered for it, so what a killed worker had not sent goes out at its next start, under the same
    ids. Bounded by the disk, not by memory. Two processes sharing one spool would send some events
    twice, which their ids make harmless.
    """

    def __init__(self, spool_dir: str) -> None:
        os.makedirs(spool_dir, exist_ok=True)
        self._db = sqlite3.connect(
            os.path.join(spool_dir, "callmeter-spool.sqlite3"), check_same_thread=False, isolation_level=None
        )
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL survives the death of the process (what the spool is for); FULL would also survive power loss.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)")
            (self._count,) = self._db.execute("SELECT count(*) FROM pending").fetchone()

    def add(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("INSERT INTO pending (body) VALUES (?)", (json.dumps(body, separators=(",", ":")),))
            self._count += 1

    def oldest(self, limit: int) -> list[tuple[int, dict[str, Any]]]:
        with self._lock:
            rows = self._db.execute("SELECT seq, body FROM pending ORDER BY seq LIMIT ?", (limit,)).fetchall()
        return [(seq, json.loads(body)) for seq, body in rows]

    def remove(self, seqs: list[int]) -> None:
        if not seqs:
            return
        with self._lock:
            self._db.executemany("DELETE FROM pending WHERE seq = ?", [(seq,) for seq in seqs])
            (self._count,) = self._db.execute("SELECT count(*) FROM pending").fetchone()

    def __len__(self) -> int:
        with self._lock:
            return self._count

    def close(self) -> None:
        with self._lock:
            self._db.close()
