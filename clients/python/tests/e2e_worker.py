"""
The worker of the end-to-end test (test/clients/clients-e2e.test.ts): a call's metrics, made with the
framework's own classes, through the forwarder or observer to a callmeter server.

    e2e_worker.py --base-url URL --user-id U --room R --framework livekit|pipecat --count N
                  --ledger PATH [--spool-dir DIR] [--timeout SECONDS] [--crash-after M]

Prints {"session_id": ...} first and {"recorded": n, "rejected": n} last; writes one JSON line per
distinct usage event to the ledger (the body as sent, less its ids and time). --crash-after M ends
the process abruptly (exit 3, nothing flushed) once M metrics were recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable

from callmeter import Callmeter
from callmeter._records import usage_body

LEDGER_DROPS = ("event_id", "session_id", "user_id", "timestamp", "agent_id")


class LedgerClient:
    """The client, writing each distinct event it records to the ledger as it goes (line-buffered: a crash keeps them)."""

    def __init__(self, client: Callmeter, ledger_path: str) -> None:
        self.client = client
        self.ledger = open(ledger_path, "w", buffering=1, encoding="utf-8")
        self.ids: set[str] = set()

    def record(self, **fields: Any) -> str:
        event_id = self.client.record(**fields)
        if event_id not in self.ids:
            self.ids.add(event_id)
            names = ("session_id", "user_id", "provider", "event_type", "model", "agent_id", "key", "timestamp")
            body = usage_body(
                **{name: fields.get(name) for name in names},
                quantities={k: v for k, v in fields.items() if k not in names},
            )
            line = {k: v for k, v in body.items() if k not in LEDGER_DROPS}
            self.ledger.write(json.dumps(line, sort_keys=True) + "\n")
        return event_id


def livekit_metrics(now: float) -> Callable[[int], Any]:
    from livekit.agents import metrics as lk

    def metric(i: int) -> Any:
        common = {"label": "e2e", "request_id": f"req-{i}", "timestamp": now + i / 1000, "duration": 0.5}
        kind = i % 4
        if kind == 0:
            return lk.LLMMetrics(
                **common,
                type="llm_metrics",
                ttft=0.2,
                cancelled=False,
                prompt_tokens=100 + i % 50,
                prompt_cached_tokens=(i % 5) * 10,
                completion_tokens=20 + i % 30,
                total_tokens=120 + i % 50 + i % 30,
                tokens_per_second=40.0,
                speech_id=f"speech-{i}",
                metadata=lk.base.Metadata(model_name="gpt-4o-mini", model_provider="openai"),
            )
        if kind == 1:
            return lk.STTMetrics(
                **common,
                type="stt_metrics",
                audio_duration=1.5 + (i % 7) * 0.25,
                streamed=True,
                metadata=lk.base.Metadata(model_name="nova-3", model_provider="Deepgram"),
            )
        if kind == 2:
            return lk.TTSMetrics(
                **common,
                type="tts_metrics",
                ttfb=0.1,
                audio_duration=2.0,
                cancelled=False,
                characters_count=40 + i % 60,
                streamed=True,
                speech_id=f"speech-{i}",
                metadata=lk.base.Metadata(model_name="sonic-3", model_provider="Cartesia"),
            )
        details = lk.RealtimeModelMetrics
        return lk.RealtimeModelMetrics(
            **common,
            type="realtime_model_metrics",
            session_duration=60.0,
            ttft=0.3,
            cancelled=False,
            input_tokens=200 + i % 40,
            output_tokens=80,
            total_tokens=280 + i % 40,
            tokens_per_second=30.0,
            input_token_details=details.InputTokenDetails(
                audio_tokens=150,
                text_tokens=50 + i % 40,
                cached_tokens=20,
                cached_tokens_details=details.CachedTokenDetails(audio_tokens=10, text_tokens=10),
            ),
            output_token_details=details.OutputTokenDetails(text_tokens=20, audio_tokens=60),
            metadata=lk.base.Metadata(model_name="gpt-4o-realtime-preview", model_provider="openai"),
        )

    return metric


def pipecat_frames() -> Callable[[int], Any]:
    from pipecat.frames.frames import MetricsFrame
    from pipecat.metrics.metrics import (
        LLMTokenUsage,
        LLMUsageMetricsData,
        STTUsage,
        STTUsageMetricsData,
        TTSUsageMetricsData,
    )

    def frame(i: int) -> Any:
        kind = i % 3
        if kind == 0:
            data = LLMUsageMetricsData(
                processor="OpenAILLMService#0",
                model="gpt-4o-mini",
                value=LLMTokenUsage(
                    prompt_tokens=100 + i % 50,
                    completion_tokens=20 + i % 30,
                    total_tokens=120 + i % 50 + i % 30,
                    cache_read_input_tokens=(i % 5) * 10,
                ),
            )
        elif kind == 1:
            data = TTSUsageMetricsData(processor="CartesiaTTSService#0", model="sonic-3", value=40 + i % 60)
        else:
            data = STTUsageMetricsData(
                processor="DeepgramSTTService#0", model="nova-3", value=STTUsage(audio_seconds=1.5 + (i % 7) * 0.25)
            )
        return MetricsFrame(data=[data])

    return frame


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--user-id", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--framework", choices=["livekit", "pipecat"], required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--spool-dir")
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--crash-after", type=int)
    args = parser.parse_args()

    client = Callmeter(
        args.base_url,
        timeout=args.timeout,
        spool_dir=args.spool_dir,
        batch_size=100,
        flush_interval=0.1,
        # The server is down for seconds at each restart: a short cap resumes soon after it is back.
        backoff_base=0.05,
        backoff_cap=0.5,
        session_attempts=60,
    )
    session = client.start_session(args.room, args.user_id)
    print(json.dumps({"session_id": session["id"]}), flush=True)
    ledger = LedgerClient(client, args.ledger)
    now = time.time() - 60
    if args.framework == "livekit":
        from callmeter.livekit import UsageForwarder

        forwarder = UsageForwarder(ledger, session_id=session["id"], user_id=args.user_id)  # type: ignore[arg-type]
        make, feed = livekit_metrics(now), forwarder.on_metrics
    else:
        from callmeter.pipecat import CallmeterObserver

        observer = CallmeterObserver(ledger, session_id=session["id"], user_id=args.user_id)  # type: ignore[arg-type]
        make, feed = pipecat_frames(), observer.record_frame
    for i in range(args.count):
        item = make(i)
        feed(item)
        if i % 10 == 0:
            feed(item)  # the same metric again: one event
        if args.crash_after is not None and i + 1 == args.crash_after:
            os._exit(3)
    complete = client.close(timeout=600)
    print(json.dumps({"recorded": len(ledger.ids), "rejected": client.rejected_count}), flush=True)
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
