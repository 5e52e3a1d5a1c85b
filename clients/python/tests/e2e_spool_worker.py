"""
The worker of the refusals end-to-end test (test/clients/client-refusals-e2e.test.ts): records usage
into one session through a spool, waits up to --wait seconds for the server to answer for it, and
prints what the client kept, sent and refused.

    e2e_spool_worker.py --base-url URL --api-key KEY --spool-dir DIR --session-id S --user-id U
                        [--count N] [--key-prefix P] [--wait SECONDS]

Prints one JSON line: {"flushed", "stats", "auth_errors": [status, ...], "rejected": [event_id, ...]}.
"""

from __future__ import annotations

import argparse
import json
import logging

from callmeter import Callmeter


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--base-url", "--api-key", "--spool-dir", "--session-id", "--user-id"):
        parser.add_argument(name, required=True)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--key-prefix", default="k")
    parser.add_argument("--wait", type=float, default=30.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    auth_errors: list[int] = []
    rejected: list[str] = []
    client = Callmeter(
        args.base_url,
        args.api_key,
        spool_dir=args.spool_dir,
        batch_size=100,
        flush_interval=0.2,
        backoff_base=0.05,
        backoff_cap=1.0,
        auth_backoff_cap=1.0,
        on_auth_error=lambda error: auth_errors.append(error.status),
        on_rejected=lambda refused: rejected.append(refused.body["event_id"]),
    )
    for i in range(args.count):
        client.record(
            session_id=args.session_id,
            user_id=args.user_id,
            provider="deepgram",
            event_type="stt_minutes",
            model="nova-3",
            key=f"{args.key_prefix}{i}",
            usage_data={"audio_duration_seconds": 90},
        )
    flushed = client.flush(args.wait)
    stats = client.stats()
    client.close(timeout=0.5)
    print(json.dumps({"flushed": flushed, "stats": stats, "auth_errors": auth_errors, "rejected": rejected}))


if __name__ == "__main__":
    main()
