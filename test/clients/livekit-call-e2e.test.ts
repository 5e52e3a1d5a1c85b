import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { runWorker, summaryOf, type WorkerRun } from '../support/client-e2e.ts';
import { clientPackages } from '../support/client-packages.ts';
import { eventually, isolate } from '../support/harness.ts';

// A call of LiveKit's own example voice agent (inference STT, an LLM behind a FallbackAdapter whose first
// model is down, inference TTS; the vendor's network a local stub), its usage forwarded by the Python
// client from `session_usage_updated` to the embedded process. The tenant's total must equal, to the last
// decimal, what LiveKit's own usage summary of the call costs at the tenant's prices; and the call's
// snapshots sent again by a new worker must change nothing.
// The client as a user installs it: the wheel, in the fresh venv of the clients' setup.
const PYTHON = clientPackages().python;
const WORKER = 'clients/python/tests/e2e_livekit_call.py';
const USER = 'user-livekit-call';
const SERVED = 'openai/gpt-4o-mini';

// What the tenant pays for its LiveKit Inference models (the catalogs have no price for them).
const PRICES = [
  { model: SERVED, event_type: 'llm_tokens', dimension: 'input_tokens', price: '0.15', per: '1000000' },
  { model: SERVED, event_type: 'llm_tokens', dimension: 'cached_input_tokens', price: '0.075', per: '1000000' },
  { model: SERVED, event_type: 'llm_tokens', dimension: 'output_tokens', price: '0.6', per: '1000000' },
  { model: 'deepgram/nova-3', event_type: 'stt_minutes', dimension: 'quantity', price: '0.0077', per: '1' },
  { model: 'cartesia/sonic-3', event_type: 'tts_characters', dimension: 'quantity', price: '50', per: '1000000' },
] as const;

type LiveKitUsage = Record<string, string | number> & { type: string; provider: string; model: string };

let server: CallmeterProcess | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** LiveKit's number as the exact decimal it prints (its shortest round-trip text). */
const exact = (value: string | number | undefined) => new Exact(String(value ?? 0));

function price(model: string, dimension: string): Exact {
  const entry = PRICES.find((p) => p.model === model && p.dimension === dimension);
  if (entry === undefined) throw new Error(`no price for ${model} ${dimension}`);
  return new Exact(entry.price).dividedBy(entry.per);
}

/** What LiveKit's summary costs at PRICES: cached input at its own price, the rest of the input at the input price. */
function costOf(usage: readonly LiveKitUsage[]): Exact {
  let total = new Exact(0);
  for (const item of usage) {
    if (item.type === 'llm_usage') {
      const cached = exact(item.input_cached_tokens);
      total = total
        .plus(exact(item.input_tokens).minus(cached).times(price(item.model, 'input_tokens')))
        .plus(cached.times(price(item.model, 'cached_input_tokens')))
        .plus(exact(item.output_tokens).times(price(item.model, 'output_tokens')));
    } else if (item.type === 'stt_usage') {
      total = total.plus(exact(item.audio_duration).dividedBy(60).times(price(item.model, 'quantity')));
    } else if (item.type === 'tts_usage') {
      total = total.plus(exact(item.characters_count).times(price(item.model, 'quantity')));
    }
  }
  return total;
}

interface CallOutput {
  readonly session_id: string;
  readonly event_ids: readonly string[];
  readonly usage: readonly LiveKitUsage[];
}

function output(run: WorkerRun): CallOutput {
  if (run.code !== 0) throw new Error(`worker exited ${run.code}\n${run.stdout}\n${run.stderr}`);
  const last = run.lines.at(-1) as CallOutput | undefined;
  if (last?.event_ids === undefined) throw new Error(`no output line\n${run.stdout}\n${run.stderr}`);
  return last;
}

async function priceTheTenantsModels(url: string): Promise<void> {
  for (const entry of PRICES) {
    const created = await call(url, 'POST', '/api/rates', { user_id: USER, provider: 'livekit', ...entry });
    expect(created.status, created.text).toBe(201);
  }
  // Every pricing process reads new entries within seconds: wait until the quotes use them.
  await eventually(async () => {
    for (const entry of PRICES) {
      const quote = await call<{ scope: string }>(url, 'POST', '/api/rates/quote', {
        user_id: USER,
        provider: 'livekit',
        model: entry.model,
        event_type: entry.event_type,
        quantity: 1,
        ...(entry.event_type === 'llm_tokens' ? { input_tokens: 1, output_tokens: 0 } : {}),
      });
      if (quote.body.scope !== 'tenant') throw new Error(`${entry.model} not priced by the tenant yet`);
    }
  }, 30_000);
}

describe('a LiveKit voice call, end to end', () => {
  it("costs exactly what LiveKit's own usage summary of the call costs, and a replay changes nothing", async () => {
    server = await startCallmeter({ DATA_DIR: isolate('livekit-call-e2e').dataDir, LOG_LEVEL: 'warn' });
    await priceTheTenantsModels(server.url);
    const snapshots = path.join(mkdtempSync(path.join(os.tmpdir(), 'callmeter-livekit-call-')), 'snapshots.json');
    const worker = [WORKER, '--base-url', server.url, '--user-id', USER, '--room', 'room-livekit-call'];

    const first = output(await runWorker(PYTHON, [...worker, '--turns', '3', '--snapshots', snapshots], 120_000));
    // The FallbackAdapter's backup served every turn: LiveKit's summary, and so the bill, name it alone.
    expect(first.usage.map((usage) => `${usage.type} ${usage.model}`).sort()).toEqual([
      `llm_usage ${SERVED}`,
      'stt_usage deepgram/nova-3',
      'tts_usage cartesia/sonic-3',
    ]);
    expect(first.event_ids).toHaveLength(9);
    const expected = costOf(first.usage);
    expect(expected.gt(0)).toBe(true);
    const summary = await summaryOf(server.url, USER, 9);
    expect(summary.event_count).toBe(9);
    expect(summary.unpriced_event_count).toBe(0);
    expect(new Exact(summary.total_cost).toFixed()).toBe(expected.toFixed());

    // A worker started again on the call, sending every snapshot of the run again: the same ids, dropped.
    const again = output(await runWorker(PYTHON, [...worker, '--replay', snapshots], 120_000));
    expect(again.session_id).toBe(first.session_id);
    expect([...again.event_ids].sort()).toEqual([...first.event_ids].sort());
    const after = await summaryOf(server.url, USER, 9);
    expect(after.event_count).toBe(9);
    expect(new Exact(after.total_cost).toFixed()).toBe(expected.toFixed());
  });
});
