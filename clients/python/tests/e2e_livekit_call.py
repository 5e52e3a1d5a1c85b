"""
The worker of test/clients/livekit-call-e2e.test.ts: one call of LiveKit's example voice agent
(livekit_voice_agent.py, on the gateway stub), its usage forwarded by UsageForwarder from
`session_usage_updated` to a callmeter server.

    e2e_livekit_call.py --base-url URL --user-id U --room R --turns N --snapshots PATH
    e2e_livekit_call.py --base-url URL --user-id U --room R --replay PATH

Prints one JSON line: {"session_id", "event_ids", "usage"} where usage is LiveKit's own totals
(session.usage). --snapshots writes every snapshot the session emitted; --replay sends those again
through a new forwarder, as a worker started again on the same call would, and prints the ids it sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from livekit.agents import metrics as lk
from livekit_gateway import InferenceGateway
from livekit_voice_agent import PRIMARY, run_call, voice_session

from callmeter import Callmeter
from callmeter.livekit import UsageForwarder, run_of

USAGE_MODELS = {"llm_usage": lk.LLMModelUsage, "tts_usage": lk.TTSModelUsage, "stt_usage": lk.STTModelUsage}


class IdsClient:
    """The client, keeping the ids of what the forwarder recorded."""

    def __init__(self, client: Callmeter) -> None:
        self.client = client
        self.ids: list[str] = []

    def record(self, **fields: Any) -> str:
        event_id = self.client.record(**fields)
        self.ids.append(event_id)
        return event_id


async def call(forwarder: UsageForwarder, turns: int, snapshots_path: str) -> list[dict[str, Any]]:
    gateway = InferenceGateway(failing_models={PRIMARY})
    await gateway.start()
    try:
        session, spoken = voice_session(gateway.url)
        snapshots: list[dict[str, Any]] = []
        session.on(
            "session_usage_updated",
            lambda event: snapshots.append(
                {
                    "run": run_of(session),
                    "created_at": event.created_at,
                    "usage": [usage.model_dump() for usage in event.usage.model_usage],
                }
            ),
        )
        forwarder.attach(session)
        await run_call(session, spoken, turns)
    finally:
        await gateway.close()
    with open(snapshots_path, "w", encoding="utf-8") as out:
        json.dump(snapshots, out)
    return [usage.model_dump() for usage in session.usage.model_usage]


def replay(forwarder: UsageForwarder, snapshots_path: str) -> None:
    with open(snapshots_path, encoding="utf-8") as source:
        snapshots = json.load(source)
    for snapshot in snapshots:
        usage = [USAGE_MODELS[item["type"]](**item) for item in snapshot["usage"] if item["type"] in USAGE_MODELS]
        forwarder.on_usage(usage, run=snapshot["run"], timestamp=snapshot["created_at"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--user-id", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--snapshots")
    parser.add_argument("--replay")
    args = parser.parse_args()

    client = Callmeter(args.base_url, timeout=10, flush_interval=0.1)
    session = client.start_session(args.room, args.user_id)
    recording = IdsClient(client)
    forwarder = UsageForwarder(recording, session_id=session["id"], user_id=args.user_id)  # type: ignore[arg-type]
    usage: list[dict[str, Any]] = []
    if args.replay:
        replay(forwarder, args.replay)
    else:
        usage = asyncio.run(call(forwarder, args.turns, args.snapshots))
    complete = client.close(timeout=60)
    print(json.dumps({"session_id": session["id"], "event_ids": recording.ids, "usage": usage}), flush=True)
    return 0 if complete and client.rejected_count == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
