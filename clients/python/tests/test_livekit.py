"""
The LiveKit forwarder with livekit-agents' own classes: a real AgentSession running LiveKit Inference's
STT, LLM (behind a real FallbackAdapter) and TTS against the gateway stub, LiveKit's own usage models
for every counter, and its metric classes for versions without `session_usage_updated`.
"""

from __future__ import annotations

import json
import logging
import warnings
from decimal import Decimal
from types import SimpleNamespace

import pytest
from livekit.agents import AgentSession, MetricsCollectedEvent, SessionUsageUpdatedEvent
from livekit.agents import metrics as lk
from livekit_gateway import InferenceGateway
from livekit_voice_agent import BACKUP, PRIMARY, run_call, voice_session

import callmeter.livekit as forwarding
from callmeter import AsyncCallmeter, Callmeter
from callmeter.livekit import UsageForwarder, compare_totals, meter_job, run_of
from callmeter.providers import pipecat_provider, provider_id

SESSION = "00000000-0000-4000-8000-000000000001"
IDS = ("event_id", "session_id", "user_id", "agent_id", "timestamp")
# One 50 ms chunk of the agent's STT at 2**14 Hz, and one utterance of 24 of them (livekit_voice_agent.py).
CHUNK = Decimal(819) / Decimal(16384)
UTTERANCE = 24 * CHUNK


def sent(server, client) -> list[dict]:
    assert client.flush(10)
    return [body for batch in server.batches for body in batch]


def canonical(body: dict) -> str:
    return json.dumps(body, sort_keys=True)


def without_ids(bodies: list[dict]) -> list[dict]:
    return [{k: v for k, v in body.items() if k not in IDS} for body in bodies]


@pytest.fixture
async def gateway():
    stub = InferenceGateway(failing_models={PRIMARY})
    await stub.start()
    yield stub
    await stub.close()


async def test_a_real_voice_call_is_forwarded_from_session_usage_updated_per_served_model(server, gateway, caplog):
    client = Callmeter(server.url, flush_interval=60)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1", agent_id="agent-1")
    session, spoken = voice_session(gateway.url)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG, logger="livekit.agents"):
        warnings.simplefilter("always")
        forwarder.attach(session)
        await run_call(session, spoken, turns=2)
    # Never subscribed to the deprecated event: LiveKit logs and warns nothing about it.
    assert "metrics_collected is deprecated" not in caplog.text
    assert not [w for w in caught if "metrics_collected" in str(w.message)]
    # The FallbackAdapter's first model failed each turn; the backup served and is what is billed.
    assert gateway.completions.count(BACKUP) == 2 and PRIMARY in gateway.completions
    bodies = without_ids(sent(server, client))
    llm = {"provider": "livekit", "model": BACKUP, "event_type": "llm_tokens"}
    tts = {"provider": "livekit", "model": "cartesia/sonic-3", "event_type": "tts_characters"}
    stt = {"provider": "livekit", "model": "deepgram/nova-3", "event_type": "stt_minutes"}
    turn_llm = {**llm, "quantity": 1242, "input_tokens": 1200, "cached_input_tokens": 1024, "output_tokens": 42}
    turn_tts = {**tts, "quantity": 27, "usage_data": {"audio_duration_seconds": "0.2"}}
    turn_stt = {**stt, "usage_data": {"audio_duration_seconds": format(UTTERANCE.normalize(), "f")}}
    assert sorted(bodies, key=canonical) == sorted([turn_stt, turn_llm, turn_tts] * 2, key=canonical)
    assert {body["agent_id"] for body in sent(server, client)} == {"agent-1"}
    # What was forwarded adds up to LiveKit's own totals, counter for counter.
    assert compare_totals(forwarder, session)
    totals = forwarder.totals(run_of(session))
    assert totals[("stt_usage", "livekit", "deepgram/nova-3")]["audio_duration"] == 2 * UTTERANCE
    assert ("llm_usage", "livekit", PRIMARY) not in totals
    client.close()


async def test_replayed_snapshots_send_the_same_ids_and_the_server_counts_them_once(server, gateway):
    client = Callmeter(server.url, flush_interval=60)
    session, spoken = voice_session(gateway.url)
    snapshots: list[SessionUsageUpdatedEvent] = []
    session.on("session_usage_updated", snapshots.append)
    first = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    first.attach(session)
    await run_call(session, spoken, turns=2)
    sent(server, client)
    stored = dict(server.stored)
    run = run_of(session)
    # A worker started again on the same call, replaying the run's snapshots (and each one twice).
    second = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    replayed = []
    for event in snapshots:
        replayed += second.on_usage(event.usage, run=run, timestamp=event.created_at)
        assert second.on_usage(event.usage, run=run, timestamp=event.created_at) == []
    assert set(replayed) == set(stored) and len(replayed) == len(stored) == 6
    bodies = sent(server, client)
    assert len(bodies) == 12 and server.stored == stored
    # An older snapshot after a newer one adds nothing.
    assert second.on_usage(snapshots[0].usage, run=run) == []
    client.close()


async def test_each_start_of_a_session_is_a_run_of_its_own(server, gateway):
    # LiveKit's totals start from zero at each start(): the second run's usage is new, never a replay.
    client = Callmeter(server.url, flush_interval=60)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    runs = []
    for _ in range(2):
        session, spoken = voice_session(gateway.url)
        forwarder.attach(session)
        await run_call(session, spoken, turns=1)
        runs.append(run_of(session))
        assert compare_totals(forwarder, session)
    assert runs[0] != runs[1]
    sent(server, client)
    assert len(server.stored) == 6
    client.close()


def llm_usage(scale: int) -> lk.LLMModelUsage:
    return lk.LLMModelUsage(
        provider="openai",
        model="gpt-realtime",
        input_tokens=1000 * scale,
        input_cached_tokens=400 * scale,
        input_cache_creation_tokens=50 * scale,
        input_audio_tokens=600 * scale,
        input_cached_audio_tokens=300 * scale,
        input_text_tokens=300 * scale,
        input_cached_text_tokens=90 * scale,
        input_image_tokens=100 * scale,
        input_cached_image_tokens=10 * scale,
        output_tokens=200 * scale,
        output_audio_tokens=150 * scale,
        output_text_tokens=50 * scale,
        output_reasoning_tokens=20 * scale,
        session_duration=12.5 * scale,
    )


def test_every_counter_of_livekits_usage_models_is_carried_as_the_wire_names_it(server):
    client = Callmeter(server.url, flush_interval=60)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    tts = lambda n: lk.TTSModelUsage(  # noqa: E731
        provider="openai",
        model="gpt-4o-mini-tts",
        input_tokens=30 * n,
        output_tokens=400 * n,
        characters_count=120 * n,
        audio_duration=2.5 * n,
    )
    stt = lambda n: lk.STTModelUsage(  # noqa: E731
        provider="openai",
        model="gpt-4o-transcribe",
        input_tokens=90 * n,
        input_audio_tokens=80 * n,
        output_tokens=25 * n,
        audio_duration=1.25 * n,
    )
    xai = lk.LLMModelUsage(provider="xai", model="grok-voice", session_duration=61.25)
    idle = lk.InterruptionModelUsage(provider="livekit", model="adaptive", total_requests=3)
    forwarder.on_usage(lk.AgentSessionUsage(model_usage=[llm_usage(1), tts(1), stt(1), xai, idle]), timestamp=1.8e9)
    forwarder.on_usage(lk.AgentSessionUsage(model_usage=[llm_usage(3), tts(3), stt(3), xai, idle]), timestamp=1.8e9)
    bodies = without_ids(sent(server, client))
    llm_delta = {
        "provider": "openai",
        "event_type": "llm_tokens",
        "model": "gpt-realtime",
        "quantity": 2400,
        "input_tokens": 2000,
        "output_tokens": 400,
        "cached_input_tokens": 800,
        "cache_write_tokens": 100,
        "audio_input_tokens": 1200,
        "cached_audio_input_tokens": 600,
        "image_input_tokens": 200,
        "cached_image_input_tokens": 20,
        "audio_output_tokens": 300,
        "reasoning_tokens": 40,
        "session_duration_seconds": 25,
        "usage_data": {"text_input_tokens": 600, "cached_text_input_tokens": 180, "text_output_tokens": 100},
    }
    tts_delta = {
        "provider": "openai",
        "event_type": "tts_characters",
        "model": "gpt-4o-mini-tts",
        "quantity": 240,
        "input_tokens": 60,
        "output_tokens": 800,
        "audio_output_tokens": 800,
        "usage_data": {"audio_duration_seconds": 5},
    }
    stt_delta = {
        "provider": "openai",
        "event_type": "stt_minutes",
        "model": "gpt-4o-transcribe",
        "usage_data": {"audio_duration_seconds": "2.5"},
        "input_tokens": 180,
        "output_tokens": 50,
        "audio_input_tokens": 160,
    }
    xai_only_time = {
        "provider": "x-ai",
        "event_type": "llm_tokens",
        "model": "grok-voice",
        "quantity": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "session_duration_seconds": "61.25",
    }
    # The first snapshot is half the second one's growth, counter for counter.
    halves = {k: v // 2 for k, v in llm_delta.items() if k.endswith("_tokens") or k == "quantity"}
    assert bodies[0] == {
        **llm_delta,
        **halves,
        "session_duration_seconds": "12.5",
        "usage_data": {k: v // 2 for k, v in llm_delta["usage_data"].items()},
    }
    assert bodies[3] == xai_only_time
    # The second snapshot's growth, and nothing for the ones that did not grow.
    assert bodies[4:] == [llm_delta, tts_delta, stt_delta]
    client.close()


def test_an_event_the_client_could_not_queue_is_carried_by_the_next_snapshot(server):
    client = Callmeter(server.url, flush_interval=60, max_queue=1)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    blocker = dict(session_id=SESSION, user_id="user-1", provider="deepgram", event_type="stt_minutes", quantity=1)
    client.record(**blocker)  # the queue is full
    assert forwarder.on_usage([llm_usage(1)]) == []
    assert client.flush(10)
    assert len(forwarder.on_usage([llm_usage(2)])) == 1
    bodies = sent(server, client)
    assert bodies[-1]["input_tokens"] == 2000 and bodies[-1]["session_duration_seconds"] == 25
    client.close()


def realtime() -> lk.RealtimeModelMetrics:
    details = lk.RealtimeModelMetrics
    return lk.RealtimeModelMetrics(
        label="openai.realtime",
        request_id="rt-1",
        timestamp=1_800_000_000.0,
        duration=1.0,
        session_duration=30.0,
        ttft=0.2,
        cancelled=False,
        input_tokens=300,
        output_tokens=90,
        total_tokens=390,
        tokens_per_second=20.0,
        input_token_details=details.InputTokenDetails(
            audio_tokens=200,
            text_tokens=80,
            image_tokens=20,
            cached_tokens=40,
            cached_tokens_details=details.CachedTokenDetails(audio_tokens=30, text_tokens=5, image_tokens=5),
        ),
        output_token_details=details.OutputTokenDetails(text_tokens=15, audio_tokens=75),
        metadata=lk.base.Metadata(model_name="gpt-4o-realtime-preview", model_provider="openai"),
    )


def stt_metrics() -> lk.STTMetrics:
    return lk.STTMetrics(
        label="deepgram.STT",
        request_id="stt-1",
        timestamp=1_800_000_000.0,
        duration=0.0,
        audio_duration=12.3,
        streamed=True,
        metadata=lk.base.Metadata(model_name="nova-3", model_provider="Deepgram"),
    )


async def test_without_session_usage_updated_each_metric_is_one_event_with_every_counter(server, monkeypatch):
    monkeypatch.setattr(forwarding, "EMITS_USAGE", False)  # as a livekit-agents before 1.5 is
    client = Callmeter(server.url, flush_interval=60)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    session = AgentSession()
    forwarder.attach(session)
    for metric in (realtime(), stt_metrics(), realtime()):
        session._usage_collector.collect(metric)  # what AgentActivity does before it emits
        session.emit("metrics_collected", MetricsCollectedEvent(metrics=metric))
    vad = lk.VADMetrics(label="silero", timestamp=1.0, idle_time=0.1, inference_duration_total=0.1, inference_count=3)
    assert forwarder.on_metrics(vad) is None
    bodies = sent(server, client)
    assert without_ids(bodies) == [
        {
            "provider": "openai",
            "event_type": "llm_tokens",
            "model": "gpt-4o-realtime-preview",
            "quantity": 390,
            "input_tokens": 300,
            "output_tokens": 90,
            "cached_input_tokens": 40,
            "audio_input_tokens": 200,
            "cached_audio_input_tokens": 30,
            "image_input_tokens": 20,
            "cached_image_input_tokens": 5,
            "audio_output_tokens": 75,
            "session_duration_seconds": 30,
            "usage_data": {"text_input_tokens": 80, "cached_text_input_tokens": 5, "text_output_tokens": 15},
        },
        {
            "provider": "deepgram",
            "event_type": "stt_minutes",
            "model": "nova-3",
            "usage_data": {"audio_duration_seconds": "12.3"},
        },
    ] + without_ids(bodies[:1])
    # The same metric twice is one event; LiveKit counted it twice, callmeter once, and says so.
    assert bodies[0]["event_id"] == bodies[2]["event_id"] and len(server.stored) == 2
    assert bodies[0]["timestamp"] == "2027-01-15T08:00:00.000Z"
    assert not compare_totals(forwarder, session)
    client.close()


async def test_meter_job_opens_the_rooms_session_and_ends_it_at_shutdown(server):
    callbacks = []
    # The parts of JobContext meter_job uses: the room's name and the shutdown callbacks.
    ctx = SimpleNamespace(room=SimpleNamespace(name="room-7"), add_shutdown_callback=callbacks.append)
    async with AsyncCallmeter(server.url, flush_interval=60) as client:
        session = AgentSession()
        forwarder = await meter_job(ctx, client, user_id="user-1", agent_id="agent-1", session=session)
        assert forwarder.session_id == SESSION
        session._usage_collector.collect(stt_metrics())
        session.emit("session_usage_updated", SessionUsageUpdatedEvent(usage=session.usage))
        for callback in callbacks:
            await callback("shutdown")
    assert server.patches == [(f"/api/sessions/{SESSION}", {"status": "COMPLETED"})]
    assert len(server.stored) == 1


def test_provider_names_map_to_callmeter_ids():
    assert provider_id("Deepgram") == "deepgram"
    assert provider_id("Azure OpenAI") == "azure"
    assert provider_id("Amazon Bedrock") == "aws"
    assert provider_id("Some New Vendor") == "some-new-vendor"
    assert provider_id(None) == "unknown"
    assert pipecat_provider("OpenAILLMService#0") == "openai"
    assert pipecat_provider("OpenAIRealtimeBetaLLMService#2") == "openai"
    assert pipecat_provider("ElevenLabsTTSService#1") == "elevenlabs"
    assert pipecat_provider("GoogleVertexLLMService#0") == "google"
