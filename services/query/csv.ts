import contentDisposition from 'content-disposition';
import { TextBody } from '../shared/http/text-body.ts';
import type { AgentCost } from './cost-by-agent.ts';
import type { TimelinePoint } from './cost-timeline.ts';

/**
 * RFC 4180 fields; a text that a spreadsheet would run as a formula (=, +, -, @, tab, CR first)
 * gets a leading apostrophe, as OWASP advises for CSV exports of user-supplied text.
 */
function field(value: string | number): string {
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Characters of CSV written before the export lets other work run (a part of the streamed answer). */
const PART_CHARS = 64 * 1024;

/**
 * A streamed CSV: the rows are made one at a time and sent in parts of about 64 KiB, with a turn of
 * the event loop between parts. A timeline of many buckets and providers runs to tens of megabytes, and
 * built as one string it held the embedded process (and so its ingest) while it was made.
 */
export function csvBody(
  name: string,
  header: readonly string[],
  rows: Iterable<readonly (string | number)[]> | AsyncIterable<readonly (string | number)[]>,
): TextBody {
  const line = (row: readonly (string | number)[]) => `${row.map(field).join(',')}\r\n`;
  async function* parts(): AsyncIterable<string> {
    let part = line(header);
    for await (const row of rows) {
      part += line(row);
      if (part.length < PART_CHARS) continue;
      yield part;
      part = '';
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (part !== '') yield part;
  }
  // A name holds the tenant's id, which may be any text: `content-disposition` quotes it, and writes one
  // outside Latin-1 as an ASCII fallback beside its UTF-8 form (RFC 6266), where Node refuses the raw header.
  return new TextBody('text/csv; charset=utf-8', parts, { 'Content-Disposition': contentDisposition(`${name}.csv`) });
}

/** One line per bucket: the date, the total, the event count and one cost column per provider. */
export function timelineCsv(points: readonly TimelinePoint[], currency: string): TextBody {
  const providers = [...new Set(points.flatMap((point) => Object.keys(point.by_provider)))].sort();
  return csvBody(
    'cost-timeline',
    ['date', 'total_cost', 'currency', 'event_count', ...providers.map((provider) => `cost_${provider}`)],
    (function* rows() {
      for (const point of points)
        yield [
          point.date,
          point.total_cost,
          currency,
          point.event_count,
          ...providers.map((provider) => point.by_provider[provider] ?? '0'),
        ];
    })(),
  );
}

/** One line per agent, most expensive first. */
export function agentsCsv(agents: readonly AgentCost[], currency: string): TextBody {
  return csvBody(
    'cost-by-agent',
    ['agent_id', 'agent_name', 'total_cost', 'currency', 'session_count', 'event_count'],
    agents.map((agent) => [
      agent.agent_id,
      agent.agent_name,
      agent.total_cost,
      currency,
      agent.session_count,
      agent.event_count,
    ]),
  );
}

/**
 * CSV when the request asks for it: format=csv, or an Accept header that names text/csv with a
 * weight above 0 and not below application/json's (format=json wins over any header; wildcards
 * choose nothing, so JSON stays the default).
 */
export function wantsCsv(format: string | undefined, accept: string): boolean {
  if (format !== undefined) return format === 'csv';
  const weights = acceptWeights(accept);
  const csv = weights.get('text/csv') ?? 0;
  return csv > 0 && csv >= (weights.get('application/json') ?? 0);
}

function acceptWeights(accept: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (type !== '' && Number.isFinite(weight)) weights.set(type, weight);
  }
  return weights;
}
