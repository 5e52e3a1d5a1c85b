"""
The vendors' side of a test call: a local server answering the OpenAI API (and OpenRouter's, which is the
same API) as the real services do, so that Pipecat's own service classes run unchanged against it.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from aiohttp import web

Completion = dict[str, Any] | int  # the usage block of a streamed answer, or an HTTP status to fail with


class OpenAIStub:
    """
    Each vendor is a path prefix (`/openai/v1`, `/openrouter/v1`). Transcriptions and speech always succeed;
    each chat completion takes the next scripted answer of its vendor: the usage the vendor reports at the
    end of the stream, or a status (401: the key was refused).
    """

    def __init__(self, completions: dict[str, list[Completion]], answer: str, transcript: str) -> None:
        self.completions = {vendor: deque(script) for vendor, script in completions.items()}
        self.answer = answer
        self.transcript = transcript
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        app = web.Application()
        app.router.add_post("/{vendor}/v1/chat/completions", self.chat_completion)
        app.router.add_post("/{vendor}/v1/audio/transcriptions", self.transcription)
        app.router.add_post("/{vendor}/v1/audio/speech", self.speech)
        self._runner = web.AppRunner(app)
        self.url = ""

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        await self._runner.cleanup()

    def base_url(self, vendor: str) -> str:
        return f"{self.url}/{vendor}/v1"

    async def chat_completion(self, request: web.Request) -> web.StreamResponse:
        vendor, body = request.match_info["vendor"], await request.json()
        self.requests.append((vendor, "chat", body))
        usage = self.completions[vendor].popleft()
        if isinstance(usage, int):
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
            return web.json_response({"error": {**error, "code": "invalid_api_key"}}, status=usage)
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        chunk = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
        words = [word + " " for word in self.answer.split(" ")]
        for index, word in enumerate(words):
            delta = {"role": "assistant", "content": word} if index == 0 else {"content": word}
            await self._event(response, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        await self._event(response, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        await self._event(response, {**chunk, "choices": [], "usage": usage})
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def transcription(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.requests.append((request.match_info["vendor"], "transcription", {"model": form.get("model")}))
        return web.json_response({"text": self.transcript})

    async def speech(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append((request.match_info["vendor"], "speech", body))
        response = web.StreamResponse(headers={"content-type": "audio/pcm"})
        await response.prepare(request)
        await response.write(bytes(4800))  # 0.1 s of 24 kHz 16-bit silence
        await response.write_eof()
        return response

    @staticmethod
    async def _event(response: web.StreamResponse, data: dict[str, Any]) -> None:
        await response.write(f"data: {json.dumps(data)}\n\n".encode())
