import type { TokenKind } from '../../services/domain/pricing/index.ts';

type EventType = 'stt_minutes' | 'llm_tokens' | 'tts_characters';

/** One provider and model a voice fleet runs, as its worker reports the usage, and where its price is expected from. */
export interface FleetItem {
  readonly provider: string;
  /** The catalog package's provider id, where the fleet's name for it differs. */
  readonly catalogProvider?: string;
  /** As the framework reports it; null where the plugin reports none. */
  readonly model: string | null;
  readonly event_type: EventType;
  readonly quantity?: string;
  readonly tokens?: Partial<Record<TokenKind, string>>;
  /** A realtime model's connected seconds (LiveKit's session_duration). */
  readonly session_duration_seconds?: string;
  /** card: one of the interface's five rates (compat); catalog: the built-in catalogs. */
  readonly scope: 'card' | 'catalog';
  /** Which plugin sends it by default: L = livekit/agents at da6af86, P = pipecat-ai 1.14.0 (installed). */
  readonly source: string;
}

/** A default model nothing prices: every one is listed here, with why, and must come out unpriced (never a silent 0). */
export interface UnpricedFleetItem {
  readonly provider: string;
  readonly model: string | null;
  readonly event_type: EventType;
  readonly quantity: string;
  readonly source: string;
  readonly reason: string;
}

const chat = { input_tokens: '1843', cached_input_tokens: '1024', output_tokens: '212' };
const plain = { input_tokens: '950', output_tokens: '140' };
const realtime = {
  input_tokens: '5200',
  cached_input_tokens: '2100',
  audio_input_tokens: '3900',
  cached_audio_input_tokens: '1600',
  output_tokens: '1480',
  audio_output_tokens: '1210',
};
// LiveKit's OpenAI realtime model reports the image tokens of video frames, cached ones included.
const realtimeVision = {
  ...realtime,
  input_tokens: '6400',
  cached_input_tokens: '2600',
  image_input_tokens: '1100',
  cached_image_input_tokens: '500',
};
const liveAudio = {
  input_tokens: '4100',
  audio_input_tokens: '3600',
  output_tokens: '1300',
  audio_output_tokens: '1150',
};
const promptCache = {
  input_tokens: '4740',
  cached_input_tokens: '2048',
  cache_write_tokens: '2600',
  output_tokens: '255',
};
// OpenAI's token-billed speech: audio in and text out for transcription, text in and audio out for speech.
const transcribed = { input_tokens: '1500', audio_input_tokens: '1500', output_tokens: '92' };
const spoken = { input_tokens: '118', output_tokens: '2350', audio_output_tokens: '2350' };

const llm = (provider: string, model: string, tokens: Partial<Record<TokenKind, string>>, source: string) =>
  ({ provider, model, event_type: 'llm_tokens', tokens, scope: 'catalog', source }) as const;
const stt = (provider: string, model: string | null, quantity: string, source: string) =>
  ({ provider, model, event_type: 'stt_minutes', quantity, scope: 'catalog', source }) as const;
const tts = (provider: string, model: string | null, quantity: string, source: string) =>
  ({ provider, model, event_type: 'tts_characters', quantity, scope: 'catalog', source }) as const;

/**
 * The models and voices LiveKit Agents' and Pipecat's plugins use by default, for OpenAI, Anthropic,
 * Google, Deepgram, AssemblyAI, ElevenLabs, Cartesia, Azure, AWS, Groq, xAI and Speechmatics (and a few
 * more vendors and dated snapshots), as the plugins report them (docs/pricing-kinds.md). Provider ids are
 * the clients' (clients/python/src/callmeter/providers.py). Defaults nothing prices are FLEET_UNPRICED.
 */
export const FLEET_MIX: readonly FleetItem[] = [
  // OpenAI
  llm('openai', 'gpt-4.1', chat, 'L openai/llm.py, responses/llm.py; P openai/llm.py, responses/llm.py'),
  {
    ...llm('openai', 'gpt-realtime', realtimeVision, 'L openai/realtime/realtime_model.py'),
    session_duration_seconds: '95.5',
  },
  llm('openai', 'gpt-realtime-2.1', realtime, 'P openai/realtime/llm.py'),
  { ...stt('openai', 'gpt-4o-mini-transcribe', '1.5', 'L openai/stt.py, with its tokens'), tokens: transcribed },
  stt('openai', 'gpt-4o-mini-transcribe', '1.5', 'L openai/stt.py, minutes only'),
  { ...stt('openai', 'gpt-4o-transcribe', '1.5', 'earlier P openai/stt.py, with its tokens'), tokens: transcribed },
  stt('openai', 'gpt-transcribe', '2.5', 'P openai/stt.py'),
  { ...tts('openai', 'gpt-4o-mini-tts', '480', 'L openai/tts.py, with its tokens'), tokens: spoken },
  llm('openai', 'gpt-4o-mini', chat, 'earlier defaults'),
  llm('openai', 'gpt-4.1-mini', plain, 'earlier defaults'),
  llm('openai', 'gpt-4o-2024-08-06', chat, 'dated snapshot'),
  llm('openai', 'gpt-4o-realtime-preview-2024-12-17', realtime, 'earlier realtime default'),
  llm('openai', 'gpt-4o-mini-realtime-preview', realtime, 'earlier realtime default'),
  tts('openai', 'tts-1', '640', 'earlier TTS default'),
  // Anthropic
  llm('anthropic', 'claude-sonnet-4-6', promptCache, 'L anthropic/llm.py; P anthropic/llm.py'),
  {
    ...llm('anthropic', 'claude-3-5-sonnet-20241022', promptCache, 'earlier default'),
    tokens: { input_tokens: '4740', cache_write_tokens: '4735', output_tokens: '255' },
  },
  llm('anthropic', 'claude-sonnet-4-20250514', chat, 'earlier default'),
  // Google (the card's provider-wide google rates are gemini-2.5-flash's: the catalog's model price comes first)
  llm('google', 'gemini-2.5-flash', plain, 'L google/llm.py'),
  llm('google', 'gemini-3.6-flash', chat, 'P google/llm.py'),
  llm('google', 'gemini-3.8-flash', plain, 'P google/vertex/llm.py'),
  llm('google', 'gemini-2.0-flash-001', plain, 'earlier default'),
  {
    ...llm('google', 'gemini-2.5-flash-native-audio-preview-12-2025', liveAudio, 'L google/realtime/realtime_api.py'),
    session_duration_seconds: '64.25',
  },
  llm('google', 'gemini-live-2.5-flash-native-audio', liveAudio, 'L google/realtime/realtime_api.py on Vertex'),
  // Models the catalog does not know: the card's provider-wide google rates, and the provider-wide STT price.
  { ...llm('google', 'models/gemini-3.8-live', liveAudio, 'P google/gemini_live/llm.py'), scope: 'card' },
  { ...llm('google', 'google/gemini-3.8-live', liveAudio, 'P google/gemini_live/vertex/llm.py'), scope: 'card' },
  stt('google', 'gemini-3.5-transcribe-live', '1.1', 'P google/gemini_live/stt.py (provider-wide price)'),
  stt('google', 'latest_long', '2.75', 'L google/stt.py; P google/stt.py (provider-wide price)'),
  tts('google', 'chirp_3', '760', 'L google/tts.py with a Chirp 3 HD voice'),
  // Deepgram
  stt('deepgram', 'nova-3', '3.25', 'L deepgram/stt.py'),
  stt('deepgram', 'nova-3-general', '3.25', 'P deepgram/stt.py (the nova-3 family)'),
  stt('deepgram', 'flux-general-en', '1.8', 'L deepgram/stt_v2.py; P deepgram/flux/stt.py'),
  tts('deepgram', 'aura-2-andromeda-en', '1200', 'L deepgram/tts.py (the aura-2 family)'),
  // AssemblyAI
  stt('assemblyai', 'universal-3-5-pro', '2.5', 'L assemblyai/stt.py'),
  stt('assemblyai', 'universal-3-6-pro', '2.5', 'P assemblyai/stt.py'),
  // ElevenLabs
  tts('elevenlabs', 'eleven_turbo_v2_5', '2210', 'L elevenlabs/tts.py'),
  tts('elevenlabs', 'eleven_flash_v2_5', '1870', 'P elevenlabs/tts.py'),
  stt('elevenlabs', 'scribe_v1', '1.2', 'L elevenlabs/stt.py (HTTP)'),
  stt('elevenlabs', 'scribe_v2_realtime', '1.2', 'L elevenlabs/stt.py, P elevenlabs/stt.py (streaming)'),
  stt('elevenlabs', 'scribe_v2', '1.2', 'P elevenlabs/stt.py (HTTP)'),
  // Cartesia
  tts('cartesia', 'sonic-3', '1480', 'L cartesia/tts.py'),
  tts('cartesia', 'sonic-3.5', '930', 'earlier P cartesia/tts.py'),
  tts('cartesia', 'sonic-3.6', '930', 'P cartesia/tts.py (provider-wide price)'),
  stt('cartesia', 'ink-2', '0.75', 'L cartesia/stt.py for English; P cartesia/turns/stt.py'),
  stt('cartesia', 'ink-whisper', '0.75', 'L cartesia/stt.py; P cartesia/stt.py'),
  // Azure
  llm('azure', 'gpt-4o', chat, 'L azure/responses/llm.py, openai.LLM.with_azure'),
  llm('azure', 'gpt-4.1', chat, 'P azure/llm.py'),
  llm('azure', 'gpt-4o-mini', chat, 'P azure/voice_live/llm.py (priced at the model’s tokens)'),
  stt('azure', 'unknown', '2.1', 'L azure/stt.py (provider-wide price)'),
  stt('azure', null, '2.1', 'P azure/stt.py (provider-wide price)'),
  // AWS
  llm('aws', 'us.amazon.nova-lite-v1:0', plain, 'P aws/llm.py'),
  llm('aws', 'amazon.nova-2-sonic-v1:0', liveAudio, 'L aws/experimental/realtime/realtime_model.py'),
  stt('aws', 'unknown', '1.6', 'L aws/stt.py (provider-wide price)'),
  stt('aws', null, '1.6', 'P aws/stt.py (provider-wide price)'),
  tts('aws', 'generative', '905', 'L aws/tts.py (the Polly engine)'),
  // Groq
  llm('groq', 'llama-3.3-70b-versatile', plain, 'L groq/services.py'),
  llm('groq', 'openai/gpt-oss-120b', chat, 'P groq/llm.py'),
  llm('groq', 'llama-3.1-8b-instant', plain, 'earlier default'),
  stt('groq', 'whisper-large-v3-turbo', '4.75', 'L groq/services.py; P groq/stt.py'),
  // xAI: the voice agent is billed by connected time, its tokens included
  {
    ...llm('x-ai', 'grok-voice-latest', liveAudio, 'L xai/realtime/realtime_model.py; P xai/realtime/llm.py'),
    session_duration_seconds: '150',
  },
  {
    provider: 'x-ai',
    model: 'grok-voice-latest',
    event_type: 'llm_tokens',
    quantity: '0',
    session_duration_seconds: '37.5',
    scope: 'catalog',
    source: 'the session’s last report: connected time only',
  },
  llm('x-ai', 'grok-4-1-fast-non-reasoning', chat, 'L xai/responses/llm.py'),
  llm('x-ai', 'grok-3-fast', chat, 'L openai.LLM.with_x_ai'),
  { ...llm('xai', 'grok-3', chat, 'earlier default, the plugin’s provider name'), catalogProvider: 'x-ai' },
  stt('x-ai', 'unknown', '1.4', 'L xai/stt.py (provider-wide price)'),
  stt('x-ai', 'grok-voice-transcribe-2.0', '1.4', 'P xai/stt.py (provider-wide price)'),
  tts('x-ai', 'unknown', '1320', 'L xai/tts.py (provider-wide price)'),
  tts('x-ai', null, '1320', 'P xai/tts.py (provider-wide price)'),
  // Other vendors of the plugins, and the interface's card rates
  { ...llm('mistralai', 'mistral-large-latest', plain, 'earlier default'), catalogProvider: 'mistral' },
  llm('deepseek', 'deepseek-chat', chat, 'L openai.LLM.with_deepseek'),
  llm('cerebras', 'llama-3.3-70b', plain, 'earlier default'),
  llm('together', 'meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo', plain, 'earlier default'),
  stt('gladia', 'solaria-1', '2.2', 'L gladia/stt.py; P gladia/stt.py'),
  stt('soniox', 'stt-rt-v5', '3.1', 'L soniox/stt.py; P soniox/stt.py'),
  { ...tts('resemble', 'unknown', '512', 'L resemble/tts.py'), scope: 'card' },
];

/**
 * The plugins' defaults that neither the card nor the catalogs price, each with why: their usage is
 * stored as unpriced (GET /api/costs/unpriced lists it), and the fleet test fails if one of them is
 * priced (move it to FLEET_MIX) or if any other fleet model costs 0.
 */
export const FLEET_UNPRICED: readonly UnpricedFleetItem[] = [
  {
    provider: 'openai',
    model: 'gpt-4o-mini-tts',
    event_type: 'tts_characters',
    quantity: '480',
    source: 'P openai/tts.py',
    reason: 'billed by tokens; Pipecat reports characters only, and OpenAI publishes no price per character',
  },
  {
    provider: 'openai',
    model: 'gpt-realtime-whisper',
    event_type: 'stt_minutes',
    quantity: '1.5',
    source: 'P openai/stt.py (realtime transcription)',
    reason: 'not in genai-prices 0.1.8 nor in the speech catalog',
  },
  {
    provider: 'openai',
    model: 'gpt-live-1',
    event_type: 'llm_tokens',
    quantity: '1090',
    source: 'P openai/live/llm.py',
    reason: 'not in genai-prices 0.1.8',
  },
  {
    provider: 'google',
    model: 'gemini-2.5-flash-tts',
    event_type: 'tts_characters',
    quantity: '620',
    source: 'L google/tts.py without a voice',
    reason: 'billed by tokens (genai-prices has them); the plugin reports characters only',
  },
  {
    provider: 'google',
    model: 'gemini-3.1-flash-tts-preview',
    event_type: 'tts_characters',
    quantity: '620',
    source: 'L google/beta/gemini_tts.py; P google/tts.py (GeminiTTSService)',
    reason: 'billed by tokens, not in genai-prices 0.1.8; the plugins report characters only',
  },
  {
    provider: 'google',
    model: null,
    event_type: 'tts_characters',
    quantity: '620',
    source: 'P google/tts.py (voice en-US-Chirp3-HD-Charon)',
    reason: 'the plugin reports no model; Google prices TTS by voice family and has no provider-wide price',
  },
  {
    provider: 'deepgram',
    model: 'flux-alexis-en',
    event_type: 'tts_characters',
    quantity: '800',
    source: 'L deepgram/tts_v2.py',
    reason: 'Deepgram Flux TTS price not found (infra/rate-card/speech-catalog.md)',
  },
  {
    provider: 'deepgram',
    model: null,
    event_type: 'tts_characters',
    quantity: '800',
    source: 'P deepgram/tts.py (voice aura-2-helena-en)',
    reason: 'the plugin reports no model, and Deepgram has no provider-wide TTS price (aura and aura-2 differ)',
  },
  {
    provider: 'elevenlabs',
    model: 'eleven_v4_turbo',
    event_type: 'tts_characters',
    quantity: '900',
    source: 'P elevenlabs/dialogue/tts.py',
    reason: 'no vendor price found, only a reseller’s',
  },
  {
    provider: 'azure',
    model: 'eastus:en-US-JennyNeural',
    event_type: 'tts_characters',
    quantity: '700',
    source: 'L azure/tts.py (reports <region>:<voice>)',
    reason: 'a voice, not a model: its family (neural, HD) is not mapped to a price',
  },
  {
    provider: 'azure',
    model: null,
    event_type: 'tts_characters',
    quantity: '700',
    source: 'P azure/tts.py (voice en-US-SaraNeural)',
    reason: 'the plugin reports no model, and Azure has no provider-wide TTS price',
  },
  {
    provider: 'aws',
    model: 'amazon.nova-2-lite-v1:0',
    event_type: 'llm_tokens',
    quantity: '1090',
    source: 'L aws/llm.py',
    reason: 'not in genai-prices 0.1.8',
  },
  {
    provider: 'aws',
    model: 'amazon.nova-2-5-sonic',
    event_type: 'llm_tokens',
    quantity: '5400',
    source: 'P aws/nova_sonic/llm.py',
    reason: 'not in genai-prices 0.1.8',
  },
  {
    provider: 'aws',
    model: null,
    event_type: 'tts_characters',
    quantity: '905',
    source: 'P aws/tts.py (voice Joanna, engine unset)',
    reason: 'the plugin reports no model, so not the Polly engine that sets the price',
  },
  {
    provider: 'groq',
    model: 'canopylabs/orpheus-v1-english',
    event_type: 'tts_characters',
    quantity: '640',
    source: 'L groq/tts.py; P groq/tts.py',
    reason: 'no Groq price for Orpheus found',
  },
  {
    provider: 'x-ai',
    model: 'grok-4.20-non-reasoning',
    event_type: 'llm_tokens',
    quantity: '2055',
    source: 'P xai/llm.py',
    reason: 'not in genai-prices 0.1.8 (it has grok-4.20 only)',
  },
  {
    provider: 'speechmatics',
    model: 'enhanced',
    event_type: 'stt_minutes',
    quantity: '2.4',
    source: 'L speechmatics/stt.py (the operating point); P speechmatics/stt.py resolves the same way',
    reason: 'no public Speechmatics price (infra/rate-card/speech-catalog.json not_found)',
  },
  {
    provider: 'speechmatics',
    model: 'unknown',
    event_type: 'tts_characters',
    quantity: '500',
    source: 'L speechmatics/tts.py',
    reason: 'no public Speechmatics price',
  },
  {
    provider: 'speechmatics',
    model: null,
    event_type: 'tts_characters',
    quantity: '500',
    source: 'P speechmatics/tts.py (voice sarah)',
    reason: 'no public Speechmatics price',
  },
];
