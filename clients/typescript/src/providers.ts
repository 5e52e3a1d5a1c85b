/**
 * Provider names as LiveKit's plugins report them (metadata.modelProvider), lowercased, to the ids
 * callmeter's rate card and catalogs price. The same table as the Python client's
 * (clients/python/src/callmeter/providers.py); a test keeps the two equal.
 */
export const PROVIDER_IDS: Readonly<Record<string, string>> = {
  openai: 'openai',
  azure: 'azure',
  'azure openai': 'azure',
  azureopenai: 'azure',
  google: 'google',
  gemini: 'google',
  googlevertex: 'google',
  vertex: 'google',
  'vertex ai': 'google',
  anthropic: 'anthropic',
  aws: 'aws',
  'amazon bedrock': 'aws',
  bedrock: 'aws',
  awsbedrock: 'aws',
  groq: 'groq',
  mistral: 'mistral',
  mistralai: 'mistral',
  deepgram: 'deepgram',
  assemblyai: 'assemblyai',
  gladia: 'gladia',
  soniox: 'soniox',
  elevenlabs: 'elevenlabs',
  cartesia: 'cartesia',
  inworld: 'inworld',
  minimax: 'minimax',
  xai: 'x-ai',
  cerebras: 'cerebras',
  together: 'together',
  fireworks: 'fireworks',
};

/** callmeter's id for a provider name a framework reported ("unknown" when none). */
export function providerId(reported: string | undefined | null): string {
  if (!reported) return 'unknown';
  const name = reported.trim().toLowerCase();
  return PROVIDER_IDS[name] ?? name.replaceAll(' ', '-');
}
