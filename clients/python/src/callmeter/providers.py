"""Provider names as the frameworks report them, mapped to callmeter's provider ids (README: Providers)."""

from __future__ import annotations

import re

# What LiveKit's plugins put in metadata.model_provider and what Pipecat's service class names start
# with, lowercased, to the ids callmeter's rate card and catalogs price (the server maps some aliases
# itself, e.g. gemini -> google). Anything else passes through lowercased, spaces as "-".
PROVIDER_IDS = {
    "openai": "openai",
    "azure": "azure",
    "azure openai": "azure",
    "azureopenai": "azure",
    "google": "google",
    "gemini": "google",
    "googlevertex": "google",
    "vertex": "google",
    "vertex ai": "google",
    "anthropic": "anthropic",
    "aws": "aws",
    "amazon bedrock": "aws",
    "bedrock": "aws",
    "awsbedrock": "aws",
    "groq": "groq",
    "mistral": "mistral",
    "mistralai": "mistral",
    "deepgram": "deepgram",
    "assemblyai": "assemblyai",
    "gladia": "gladia",
    "soniox": "soniox",
    "elevenlabs": "elevenlabs",
    "cartesia": "cartesia",
    "inworld": "inworld",
    "minimax": "minimax",
    "xai": "x-ai",
    "cerebras": "cerebras",
    "together": "together",
    "fireworks": "fireworks",
}

# Pipecat services are named after their class: "OpenAILLMService#0", "DeepgramSTTService#1".
_PIPECAT_SUFFIX = re.compile(r"(Realtime)?(Beta)?(Http|WebSocket|Streaming)?(LLM|STT|TTS|S2S)?Service$")


def provider_id(reported: str | None) -> str:
    """callmeter's id for a provider name a framework reported ("unknown" when it reported none)."""
    if not reported:
        return "unknown"
    name = reported.strip().lower()
    return PROVIDER_IDS.get(name, name.replace(" ", "-"))


def pipecat_provider(processor: str) -> str:
    """The provider of a Pipecat service from its processor name: "OpenAILLMService#0" -> "openai"."""
    name = _PIPECAT_SUFFIX.sub("", processor.split("#", 1)[0])
    return provider_id(name)
