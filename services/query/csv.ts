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

function csvBody(name: string, header: readonly string[], rows: readonly (readonly (string | number)[])[]): TextBody {
  const text = [header, ...rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
  return new TextBody('text/csv; charset=utf-8', text, { 'Content-Disposition': `attachment; filename="${name}.csv"` });
}

/** One line per bucket: the date, the total, the event count and one cost column per provider. */
export function timelineCsv(points: readonly TimelinePoint[], currency: string): TextBody {
  const providers = [...new Set(points.flatMap((point) => Object.keys(point.by_provider)))].sort();
  return csvBody(
    'cost-timeline',
    ['date', 'total_cost', 'currency', 'event_count', ...providers.map((provider) => `cost_${provider}`)],
    points.map((point) => [point.date, point.total_cost, currency, point.event_count, ...providers.map((provider) => point.by_provider[provider] ?? '0')]),
  );
}

/** One line per agent, most expensive first. */
export function agentsCsv(agents: readonly AgentCost[], currency: string): TextBody {
  return csvBody(
    'cost-by-agent',
    ['agent_id', 'agent_name', 'total_cost', 'currency', 'session_count', 'event_count'],
    agents.map((agent) => [agent.agent_id, agent.agent_name, agent.total_cost, currency, agent.session_count, agent.event_count]),
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
