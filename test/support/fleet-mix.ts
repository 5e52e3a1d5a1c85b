import type { TokenKind } from '../../services/shared/pricing/token-kinds.ts';

/** One provider and model a voice fleet runs, as its worker reports the usage, and where its price is expected from. */
export interface FleetItem {
  readonly provider: string;
  /** The catalog package's provider id, where the fleet's name for it differs. */
  readonly catalogProvider?: string;
  readonly model: string;
  readonly event_type: 'stt_minutes' | 'llm_tokens' | 'tts_characters';
  readonly quantity?: string;
  readonly tokens?: Partial<Record<TokenKind, string>>;
  /** card: one of the interface's five rates (compat); catalog: the built-in catalog beneath it. */
  readonly scope: 'card' | 'catalog';
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

/**
 * The models and voices LiveKit Agents' and Pipecat's plugins use by default or document first (docs/pricing.md:
 * the catalogs beneath the card), dated snapshots and the fleets' own provider names included. Speech entries
 * name the plugins' default models (infra/rate-card/speech-catalog.md lists where each was read).
 */
export const FLEET_MIX: readonly FleetItem[] = [
  { provider: 'openai', model: 'gpt-4o-mini', event_type: 'llm_tokens', tokens: chat, scope: 'catalog' },
  { provider: 'openai', model: 'gpt-4.1', event_type: 'llm_tokens', tokens: chat, scope: 'catalog' },
  { provider: 'openai', model: 'gpt-4.1-mini', event_type: 'llm_tokens', tokens: plain, scope: 'catalog' },
  { provider: 'openai', model: 'gpt-4o-2024-08-06', event_type: 'llm_tokens', tokens: chat, scope: 'catalog' },
  { provider: 'openai', model: 'gpt-realtime', event_type: 'llm_tokens', tokens: realtime, scope: 'catalog' },
  {
    provider: 'openai',
    model: 'gpt-4o-realtime-preview-2024-12-17',
    event_type: 'llm_tokens',
    tokens: realtime,
    scope: 'catalog',
  },
  {
    provider: 'openai',
    model: 'gpt-4o-mini-realtime-preview',
    event_type: 'llm_tokens',
    tokens: realtime,
    scope: 'catalog',
  },
  {
    provider: 'anthropic',
    model: 'claude-3-5-sonnet-20241022',
    event_type: 'llm_tokens',
    tokens: { input_tokens: '4740', cache_write_tokens: '4735', output_tokens: '255' },
    scope: 'catalog',
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-20250514',
    event_type: 'llm_tokens',
    tokens: chat,
    scope: 'catalog',
  },
  { provider: 'groq', model: 'llama-3.3-70b-versatile', event_type: 'llm_tokens', tokens: plain, scope: 'catalog' },
  { provider: 'groq', model: 'llama-3.1-8b-instant', event_type: 'llm_tokens', tokens: plain, scope: 'catalog' },
  {
    provider: 'xai',
    catalogProvider: 'x-ai',
    model: 'grok-3',
    event_type: 'llm_tokens',
    tokens: chat,
    scope: 'catalog',
  },
  {
    provider: 'mistralai',
    catalogProvider: 'mistral',
    model: 'mistral-large-latest',
    event_type: 'llm_tokens',
    tokens: plain,
    scope: 'catalog',
  },
  { provider: 'deepseek', model: 'deepseek-chat', event_type: 'llm_tokens', tokens: chat, scope: 'catalog' },
  { provider: 'cerebras', model: 'llama-3.3-70b', event_type: 'llm_tokens', tokens: plain, scope: 'catalog' },
  {
    provider: 'together',
    model: 'meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo',
    event_type: 'llm_tokens',
    tokens: plain,
    scope: 'catalog',
  },
  { provider: 'azure', model: 'gpt-4o-mini', event_type: 'llm_tokens', tokens: chat, scope: 'catalog' },
  { provider: 'google', model: 'gemini-2.0-flash-001', event_type: 'llm_tokens', tokens: plain, scope: 'card' },
  { provider: 'deepgram', model: 'nova-3', event_type: 'stt_minutes', quantity: '3.25', scope: 'card' },
  { provider: 'assemblyai', model: 'universal-3-5-pro', event_type: 'stt_minutes', quantity: '2.5', scope: 'card' },
  { provider: 'resemble', model: 'unknown', event_type: 'tts_characters', quantity: '512', scope: 'card' },
  { provider: 'groq', model: 'whisper-large-v3-turbo', event_type: 'stt_minutes', quantity: '4.75', scope: 'catalog' },
  { provider: 'openai', model: 'gpt-4o-mini-transcribe', event_type: 'stt_minutes', quantity: '1.5', scope: 'catalog' },
  { provider: 'gladia', model: 'solaria-1', event_type: 'stt_minutes', quantity: '2.2', scope: 'catalog' },
  { provider: 'soniox', model: 'stt-rt-v5', event_type: 'stt_minutes', quantity: '3.1', scope: 'catalog' },
  { provider: 'cartesia', model: 'ink-whisper', event_type: 'stt_minutes', quantity: '0.75', scope: 'catalog' },
  {
    provider: 'elevenlabs',
    model: 'eleven_turbo_v2_5',
    event_type: 'tts_characters',
    quantity: '2210',
    scope: 'catalog',
  },
  {
    provider: 'elevenlabs',
    model: 'eleven_flash_v2_5',
    event_type: 'tts_characters',
    quantity: '1870',
    scope: 'catalog',
  },
  { provider: 'cartesia', model: 'sonic-3', event_type: 'tts_characters', quantity: '1480', scope: 'catalog' },
  { provider: 'cartesia', model: 'sonic-3.5', event_type: 'tts_characters', quantity: '930', scope: 'catalog' },
  {
    provider: 'deepgram',
    model: 'aura-2-andromeda-en',
    event_type: 'tts_characters',
    quantity: '1200',
    scope: 'catalog',
  },
  { provider: 'openai', model: 'tts-1', event_type: 'tts_characters', quantity: '640', scope: 'catalog' },
  { provider: 'aws', model: 'generative', event_type: 'tts_characters', quantity: '905', scope: 'catalog' },
];
