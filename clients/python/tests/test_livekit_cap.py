"""
A LiveKit voice call that stops on its per-call cap: LiveKit's example voice agent (livekit_voice_agent.py, on
the gateway stub), its usage forwarded to the embedded callmeter, where a per-call cap covers its agent; the
forwarder's on_cap_reached says goodbye and closes the session.
"""

from __future__ import annotations

import asyncio
import time
from decimal import Decimal
from typing import Any

from livekit.agents import AgentSession, utils
from livekit_gateway import InferenceGateway
from livekit_voice_agent import PRIMARY, Assistant, SpokenInput, voice_session

from callmeter import AsyncCallmeter, SessionBudget
from callmeter.livekit import UsageForwarder

USER = "tenant-livekit-cap"
# What the tenant pays for its LiveKit Inference models (the catalogs have no price for them).
PRICES = [
    ("openai/gpt-4o-mini", "llm_tokens", "input_tokens", "0.15", "1000000"),
    ("openai/gpt-4o-mini", "llm_tokens", "cached_input_tokens", "0.075", "1000000"),
    ("openai/gpt-4o-mini", "llm_tokens", "output_tokens", "0.6", "1000000"),
    ("deepgram/nova-3", "stt_minutes", "quantity", "0.0077", "1"),
    ("cartesia/sonic-3", "tts_characters", "quantity", "50", "1000000"),
]


def price_the_tenants_models(callmeter: Any) -> None:
    for model, event_type, dimension, price, per in PRICES:
        rate = {"model": model, "event_type": event_type, "dimension": dimension, "price": price, "per": per}
        callmeter.post("/api/rates", {"user_id": USER, "provider": "livekit", **rate})
    deadline = time.monotonic() + 30
    for model, event_type, *_ in PRICES:
        quantities = {"input_tokens": 1, "output_tokens": 0} if event_type == "llm_tokens" else {}
        query = {"user_id": USER, "provider": "livekit", "model": model, "event_type": event_type, "quantity": 1}
        while callmeter.post("/api/rates/quote", {**query, **quantities})["scope"] != "tenant":
            assert time.monotonic() < deadline, f"{model} not priced by the tenant within 30 s"
            time.sleep(0.2)


def per_call_cap(callmeter: Any, agent_id: str, amount: str) -> str:
    cap = {"name": f"{agent_id} per call", "user_id": USER, "agent_id": agent_id, "per_call": True}
    return callmeter.post("/api/budgets", {**cap, "period": "none", "amount": amount})["id"]


async def talk(session: AgentSession, spoken: SpokenInput, turns: int) -> int:
    """Speaks up to `turns` utterances, each answered before the next, until the session closes."""
    replies: asyncio.Queue[None] = asyncio.Queue()
    closed = asyncio.Event()

    def on_state(event: Any) -> None:
        if (event.old_state, event.new_state) == ("speaking", "listening"):
            replies.put_nowait(None)

    session.on("agent_state_changed", on_state)
    session.on("close", lambda _: closed.set())
    answered = 0
    for _ in range(turns):
        if closed.is_set():
            break
        spoken.speak(24)
        reply, ended = asyncio.ensure_future(replies.get()), asyncio.ensure_future(closed.wait())
        done, _ = await asyncio.wait({reply, ended}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        assert done, "neither an answer nor the end of the call within 30 s"
        answered += reply in done
        for pending in (reply, ended):
            pending.cancel()
    return answered


async def call_with_cap(callmeter: Any, agent_id: str, turns: int, hang_up: bool) -> dict[str, Any]:
    """One call of the agent, its forwarder told of the cap; returns what happened."""
    gateway = InferenceGateway(failing_models={PRIMARY})
    await gateway.start()
    standings: list[SessionBudget] = []
    try:
        async with AsyncCallmeter(callmeter.url, flush_interval=0.1, cap_check_interval=0.5) as client:
            call = await client.start_session(f"livekit-cap-{agent_id}", USER, agent_id)
            session, spoken = voice_session(gateway.url)

            async def on_cap_reached(standing: SessionBudget) -> None:
                standings.append(standing)
                if hang_up:  # the worker's goodbye, then it hangs up
                    session.say("This call has reached its limit. Goodbye.")
                    await session.aclose()

            forwarder = UsageForwarder(
                client, session_id=call["id"], user_id=USER, agent_id=agent_id, on_cap_reached=on_cap_reached
            )
            forwarder.attach(session)
            async with utils.http_context.open():
                await session.start(Assistant())
                answered = await talk(session, spoken, turns)
                if not standings:
                    await asyncio.sleep(3)  # the last usage's standing, read once it is stored
                await session.aclose()
            await client.flush()
            checks = client.stats()["cap_checks"]
            final = await client.session_budget(call["id"])
            await client.end_session(call["id"])
    finally:
        await gateway.close()
    return {"id": call["id"], "standings": standings, "answered": answered, "checks": checks, "final": final}


def stored_cost(callmeter: Any, session_id: str) -> tuple[list[Decimal], Decimal]:
    """The call's events' costs and its total, once the server stored what it took."""
    deadline, last = time.monotonic() + 30, None
    while True:
        answer = callmeter.get(f"/api/sessions/{session_id}/cost-breakdown")
        if answer["event_count"] == last or time.monotonic() > deadline:
            return [Decimal(event["total_cost"]) for event in answer["events"]], Decimal(answer["total_cost"])
        last = answer["event_count"]
        time.sleep(0.5)


def subset_sums(values: list[Decimal]) -> set[Decimal]:
    sums = {Decimal(0)}
    for value in values:
        sums |= {total + value for total in sums}
    return sums


async def test_a_livekit_call_that_passes_its_per_call_cap_is_told_once_and_hangs_up(callmeter):
    price_the_tenants_models(callmeter)
    budget_id = per_call_cap(callmeter, "capped-agent", "0.002")
    result = await call_with_cap(callmeter, "capped-agent", turns=6, hang_up=True)

    assert len(result["standings"]) == 1
    told = result["standings"][0]
    assert (told.session_id, told.allowed, told.cap, told.remaining, told.budget_id) == (
        result["id"], False, Decimal("0.002"), Decimal(0), budget_id,
    )
    assert told.spent >= told.cap
    assert result["answered"] < 6  # the session closed itself: the caller's later turns never came
    costs, total = stored_cost(callmeter, result["id"])
    assert told.spent in subset_sums(costs)  # the exact cost of the usage stored when it was read
    assert (result["final"].allowed, result["final"].spent) == (False, total)


async def test_a_livekit_call_under_its_per_call_cap_is_never_told(callmeter):
    price_the_tenants_models(callmeter)
    per_call_cap(callmeter, "roomy-agent", "1")
    result = await call_with_cap(callmeter, "roomy-agent", turns=3, hang_up=False)

    assert result["answered"] == 3 and result["standings"] == []
    assert result["checks"] >= 2  # watched: read after the usage was sent, and again once stored
    _, total = stored_cost(callmeter, result["id"])
    final = result["final"]
    assert (final.allowed, final.cap, final.spent, final.remaining) == (True, Decimal(1), total, Decimal(1) - total)
