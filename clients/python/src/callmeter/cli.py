"""
`callmeter dead-letters`: lists the usage events the server refused for what they hold (the dead
letters beside a worker's spool), and sends them again once what made them refused is fixed.

    callmeter dead-letters list   [--spool-dir DIR | --file PATH] [--json]
    callmeter dead-letters resend [--spool-dir DIR | --file PATH] [--base-url URL] [--api-key KEY] (--all | ID ...)

An ID is an event id, or its first 8 or more characters. The base URL and key default to
$CALLMETER_URL and $CALLMETER_API_KEY, the spool folder to $CALLMETER_SPOOL_DIR.
Exit status: 0 all resent events accepted (or listed), 1 some refused again (they stay), 2 nothing
could be sent (credentials, network, a wrong argument).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Sequence

import httpx

from ._dead_letters import DEAD_LETTER_FILE, DeadLetterFile, dead_letter
from ._version import __version__
from .client import BATCH_PATH, MAX_BATCH, Backoff, _detail, _retryable

ATTEMPTS = 5


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callmeter", description="callmeter client tools")
    commands = parser.add_subparsers(dest="command", required=True)
    dead = commands.add_parser("dead-letters", help="list or resend the usage events the server refused")
    actions = dead.add_subparsers(dest="action", required=True)

    def where(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--spool-dir", default=os.environ.get("CALLMETER_SPOOL_DIR"), help="the worker's spool_dir")
        sub.add_argument("--file", help=f"the dead-letter file itself (default: SPOOL_DIR/{DEAD_LETTER_FILE})")

    listing = actions.add_parser("list", help="list the dead letters, oldest first")
    where(listing)
    listing.add_argument("--json", action="store_true", help="one JSON line per dead letter, as stored")

    resend = actions.add_parser("resend", help="send dead letters again; accepted ones leave the file")
    where(resend)
    resend.add_argument("ids", nargs="*", help="event ids (or unique prefixes of 8+ characters)")
    resend.add_argument("--all", action="store_true", help="every dead letter")
    resend.add_argument("--base-url", default=os.environ.get("CALLMETER_URL"), help="callmeter's URL")
    resend.add_argument("--api-key", default=os.environ.get("CALLMETER_API_KEY"), help="an ingest key")
    resend.add_argument("--timeout", type=float, default=30.0, help="seconds per request")

    args = parser.parse_args(argv)
    if args.file is None and args.spool_dir is None:
        parser.error("give --spool-dir (or $CALLMETER_SPOOL_DIR) or --file")
    letters = DeadLetterFile(args.file or os.path.join(args.spool_dir, DEAD_LETTER_FILE))
    if args.action == "list":
        return _list(letters, args.json)
    if not args.base_url:
        parser.error("give --base-url (or $CALLMETER_URL)")
    if args.all == bool(args.ids):
        parser.error("give event ids, or --all")
    return _resend(letters, args)


def _list(letters: DeadLetterFile, as_json: bool) -> int:
    found = letters.read()
    for letter in found:
        if as_json:
            print(json.dumps(letter, separators=(",", ":")))
            continue
        body = letter.get("body", {})
        print(
            f"{letter.get('event_id')}  {letter.get('refused_at')}  {letter.get('status') or 'item'}  "
            f"session {body.get('session_id')}  {body.get('event_type')}  {_reason(letter.get('errors'))}"
        )
    if not as_json:
        print(f"{len(found)} dead letter(s) in {letters.path}", file=sys.stderr)
    return 0


def _reason(errors: Any) -> str:
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        return str(errors[0].get("msg", errors[0]))
    return str(errors)


def _select(found: list[dict[str, Any]], ids: list[str], everything: bool) -> list[dict[str, Any]]:
    if everything:
        return found
    chosen: dict[str, dict[str, Any]] = {}
    for wanted in ids:
        matches = [letter for letter in found if str(letter.get("event_id")).startswith(wanted)]
        if len(wanted) < 8 or len(matches) != 1:
            raise SystemExit(f"callmeter: {wanted!r} names {len(matches)} dead letters (give a full id or 8+ characters)")
        chosen[matches[0]["event_id"]] = matches[0]
    return list(chosen.values())


def _resend(letters: DeadLetterFile, args: argparse.Namespace) -> int:
    try:
        chosen = _select(letters.read(), args.ids, args.all)
    except SystemExit as error:
        print(error, file=sys.stderr)
        return 2
    headers = {"user-agent": f"callmeter-python/{__version__} dead-letters"}
    if args.api_key:
        headers["authorization"] = f"Bearer {args.api_key}"
    accepted: set[str] = set()
    refused: dict[str, dict[str, Any]] = {}
    status = 0
    with httpx.Client(base_url=args.base_url.rstrip("/"), headers=headers, timeout=args.timeout) as http:
        for start in range(0, len(chosen), MAX_BATCH):
            part = chosen[start : start + MAX_BATCH]
            answers = _post(http, [letter["body"] for letter in part])
            if isinstance(answers, str):
                print(f"callmeter: {answers}; the dead letters are unchanged", file=sys.stderr)
                status = 2
                break
            by_index = {answer.get("index"): answer for answer in answers}
            for index, letter in enumerate(part):
                answer = by_index.get(index) or {}
                if answer.get("status") in ("accepted", "duplicate"):
                    accepted.add(letter["event_id"])
                else:
                    refused[letter["event_id"]] = dead_letter(letter["body"], None, answer.get("errors"))
    letters.settle(accepted, refused)
    for event_id, letter in refused.items():
        print(f"{event_id}  refused again: {_reason(letter['errors'])}")
    print(f"resent {len(accepted) + len(refused)}: {len(accepted)} accepted (removed), {len(refused)} refused again (kept)")
    return status or (1 if refused else 0)


def _post(http: httpx.Client, bodies: list[dict[str, Any]]) -> list[dict[str, Any]] | str:
    """The batch's item answers, or why there are none (the credentials, the network, an unexpected answer)."""
    backoff = Backoff(0.5, 5.0)
    why = ""
    for _ in range(ATTEMPTS):
        response: httpx.Response | None = None
        try:
            response = http.post(BATCH_PATH, json=bodies)
            if response.status_code == 200:
                return response.json()
            why = f"{BATCH_PATH} answered {response.status_code} {_detail(response)}"
            if response.status_code in (401, 403):
                return f"{why}: check --api-key"
            if not _retryable(response):
                return why
        except httpx.TransportError as error:
            why = f"no answer from {http.base_url} ({error!r})"
        time.sleep(backoff.next_delay(response))
    return f"{why} after {ATTEMPTS} attempts"


if __name__ == "__main__":
    sys.exit(main())
