"""
The network of LiveKit Inference (the gateway livekit-agents' own `inference.LLM`, `inference.STT` and
`inference.TTS` talk to), answered on 127.0.0.1 by a small aiohttp server: OpenAI's streamed chat
completions with a usage chunk, and the gateway's STT and TTS websockets. The agent under test runs the
framework's real classes unchanged, pointed here by their `base_url`.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

API_KEY, API_SECRET = "devkey", "a-secret-of-the-gateway-stub-0123456789"


@dataclass
class ChatUsage:
    """What the stub's LLM reports for each completion (OpenAI's usage chunk)."""

    prompt_tokens: int = 1200
    cached_tokens: int = 1024
    completion_tokens: int = 42
    reasoning_tokens: int = 0


@dataclass
class InferenceGateway:
    reply: str = "It is sunny in Paris today."
    usage: ChatUsage = field(default_factory=ChatUsage)
    # Models whose completions fail with a 500, as a provider that is down does.
    failing_models: set[str] = field(default_factory=set)
    # A final transcript after this many audio messages (the STT's 50 ms chunks).
    frames_per_utterance: int = 24
    transcript: str = "what is the weather in paris"
    # Audio each input_transcript is answered with, in samples at the TTS's sample rate.
    tts_samples: int = 4800
    completions: list[str] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    url: str = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/stt", self._stt)
        app.router.add_get("/v1/tts", self._tts)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model = body["model"]
        self.completions.append(model)
        if model in self.failing_models:
            return web.json_response({"error": {"message": "upstream unavailable", "type": "server_error"}}, status=500)
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        chunk_id = f"chatcmpl-{len(self.completions)}"

        async def send(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> None:
            chunk = {"id": chunk_id, "object": "chat.completion.chunk", "created": 0, "model": model}
            chunk.update(choices=choices, usage=usage)
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

        await send([{"index": 0, "delta": {"role": "assistant", "content": self.reply}, "finish_reason": None}])
        await send([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        usage = self.usage
        await send(
            [],
            {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            },
        )
        await response.write(b"data: [DONE]\n\n")
        return response

    async def _stt(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        frames = 0
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                continue
            kind = json.loads(message.data).get("type")
            if kind == "session.create":
                await ws.send_json({"type": "session.created"})
            elif kind == "input_audio":
                frames += 1
                if frames % self.frames_per_utterance == 0:
                    final = {"type": "final_transcript", "transcript": self.transcript, "language": "en"}
                    await ws.send_json({**final, "start": 0, "duration": 1.0, "confidence": 1.0})
            elif kind == "session.finalize":
                await ws.send_json({"type": "session.finalized"})
            elif kind == "session.close":
                await ws.send_json({"type": "session.closed"})
                break
        return ws

    async def _tts(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        session = 0
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            kind = data.get("type")
            session_id = f"tts-{id(ws)}-{session}"
            if kind == "input_transcript":
                audio = base64.b64encode(b"\x00\x00" * self.tts_samples).decode()
                await ws.send_json({"type": "output_audio", "audio": audio, "session_id": session_id})
            elif kind == "session.flush":
                await asyncio.sleep(0)
                await ws.send_json({"type": "done", "session_id": session_id})
                session += 1
        return ws
