"""The LiveKit forwarder with livekit-agents' own metric classes and a real AgentSession."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from livekit.agents import AgentSession, MetricsCollectedEvent
from livekit.agents import metrics as lk

from callmeter import Callmeter
from callmeter.livekit import UsageForwarder, compare_totals, meter_job
from callmeter.providers import pipecat_provider, provider_id

SESSION = "00000000-0000-4000-8000-000000000001"


def llm(i: int = 1) -> lk.LLMMetrics:
    return lk.LLMMetrics(
        label="openai.LLM",
        request_id=f"req-{i}",
        timestamp=1_800_000_000.0 + i,
        duration=0.4,
        ttft=0.1,
        cancelled=False,
        completion_tokens=30,
        prompt_tokens=120,
        prompt_cached_tokens=64,
        total_tokens=150,
        tokens_per_second=50.0,
        metadata=lk.base.Metadata(model_name="gpt-4o-mini", model_provider="openai"),
    )


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
            text_tokens=100,
            cached_tokens=40,
            cached_tokens_details=details.CachedTokenDetails(audio_tokens=30, text_tokens=10),
        ),
        output_token_details=details.OutputTokenDetails(text_tokens=15, audio_tokens=75),
        metadata=lk.base.Metadata(model_name="gpt-4o-realtime-preview", model_provider="openai"),
    )


def stt() -> lk.STTMetrics:
    return lk.STTMetrics(
        label="deepgram.STT",
        request_id="stt-1",
        timestamp=1_800_000_000.0,
        duration=0.0,
        audio_duration=12.3,
        streamed=True,
        metadata=lk.base.Metadata(model_name="nova-3", model_provider="Deepgram"),
    )


def tts() -> lk.TTSMetrics:
    return lk.TTSMetrics(
        label="cartesia.TTS",
        request_id="tts-1",
        timestamp=1_800_000_000.0,
        ttfb=0.1,
        duration=0.5,
        audio_duration=3.0,
        cancelled=False,
        characters_count=57,
        streamed=True,
        metadata=lk.base.Metadata(model_name="sonic-3", model_provider="Cartesia"),
    )


def sent(server, client) -> list[dict]:
    assert client.flush(10)
    return [body for batch in server.batches for body in batch]


def test_each_metric_kind_becomes_its_usage_event_with_its_token_kinds(server):
    client = Callmeter(server.url, flush_interval=60)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1", agent_id="agent-1")
    for metric in (llm(), realtime(), stt(), tts()):
        assert forwarder.on_metrics(metric) is not None
    vad = lk.VADMetrics(label="silero", timestamp=1.0, idle_time=0.1, inference_duration_total=0.1, inference_count=3)
    assert forwarder.on_metrics(vad) is None
    bodies = sent(server, client)
    strip = ("event_id", "session_id", "user_id", "agent_id", "timestamp")
    assert [{k: v for k, v in b.items() if k not in strip} for b in bodies] == [
        {
            "provider": "openai",
            "event_type": "llm_tokens",
            "model": "gpt-4o-mini",
            "quantity": 150,
            "input_tokens": 120,
            "cached_input_tokens": 64,
            "output_tokens": 30,
        },
        {
            "provider": "openai",
            "event_type": "llm_tokens",
            "model": "gpt-4o-realtime-preview",
            "quantity": 390,
            "input_tokens": 300,
            "cached_input_tokens": 40,
            "audio_input_tokens": 200,
            "cached_audio_input_tokens": 30,
            "output_tokens": 90,
            "audio_output_tokens": 75,
        },
        {
            "provider": "deepgram",
            "event_type": "stt_minutes",
            "model": "nova-3",
            "usage_data": {"audio_duration_seconds": "12.3"},
        },
        {"provider": "cartesia", "event_type": "tts_characters", "model": "sonic-3", "quantity": 57},
    ]
    assert {b["agent_id"] for b in bodies} == {"agent-1"}
    assert bodies[0]["timestamp"] == "2027-01-15T08:00:01.000Z"
    client.close()


def test_the_same_metric_twice_is_one_event(server):
    client = Callmeter(server.url, flush_interval=60)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    metric = llm(7)
    first, second = forwarder.on_metrics(metric), forwarder.on_metrics(metric)
    assert first == second
    assert forwarder.on_metrics(llm(8)) != first
    sent(server, client)
    assert len(server.stored) == 2
    client.close()


async def test_attach_forwards_a_real_agent_sessions_metrics_and_compares_livekits_totals(server, caplog):
    client = Callmeter(server.url, flush_interval=60)
    forwarder = UsageForwarder(client, session_id=SESSION, user_id="user-1")
    session = AgentSession()
    forwarder.attach(session)

    def emitted(metric) -> None:
        # What AgentActivity does with each metric: LiveKit's own usage totals, then the event.
        session._usage_collector.collect(metric)
        session.emit("metrics_collected", MetricsCollectedEvent(metrics=metric))

    for metric in (llm(), stt(), tts()):
        emitted(metric)
    assert len(sent(server, client)) == 3
    assert compare_totals(forwarder, session)
    # LiveKit counts a metric it emits twice twice; callmeter counts it once, and says so.
    emitted(llm())
    with caplog.at_level(logging.WARNING, logger="callmeter.livekit"):
        assert not compare_totals(forwarder, session)
    assert "differ" in caplog.text
    assert len(sent(server, client)) == 4 and len(server.stored) == 3
    client.close()


async def test_meter_job_opens_the_rooms_session_and_ends_it_at_shutdown(server):
    from callmeter import AsyncCallmeter

    callbacks = []
    # The parts of JobContext meter_job uses: the room's name and the shutdown callbacks.
    ctx = SimpleNamespace(room=SimpleNamespace(name="room-7"), add_shutdown_callback=callbacks.append)
    async with AsyncCallmeter(server.url, flush_interval=60) as client:
        session = AgentSession()
        forwarder = await meter_job(ctx, client, user_id="user-1", agent_id="agent-1", session=session)
        assert forwarder.session_id == SESSION
        session.emit("metrics_collected", MetricsCollectedEvent(metrics=tts()))
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
