import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { drawTimeline } from './chart.js';
import { openStream } from './live.js';

const html = htm.bind(h);
const AUTH_MODE = document.body.dataset.authMode === 'on' ? 'on' : 'off';
const PAGE_SIZE = 20;
const query = new URLSearchParams(location.search);

// Who the page reads for: with AUTH_MODE=off a user id (kept in this browser, or from the link), with
// AUTH_MODE=on a bearer token (a user token or a read key, kept for this tab) and optionally a user id.
function initialIdentity() {
  const userId = query.get('user_id') ?? localStorage.getItem('callmeter.user_id') ?? '';
  const token = sessionStorage.getItem('callmeter.token') ?? '';
  return { userId, token };
}

function headersOf(identity) {
  const headers = {};
  if (identity.userId) headers['x-user-id'] = identity.userId;
  if (AUTH_MODE === 'on' && identity.token) headers.authorization = `Bearer ${identity.token}`;
  return headers;
}

async function getJson(path, identity) {
  const response = await fetch(path, { headers: headersOf(identity) });
  const text = await response.text();
  const body = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error(`${path.split('?')[0]}: ${response.status} ${body?.detail ?? text}`);
  return body;
}

async function downloadCsv(path, identity, name) {
  const response = await fetch(path, { headers: { ...headersOf(identity), accept: 'text/csv' } });
  if (!response.ok) throw new Error(`${name}: ${response.status}`);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

function initialView() {
  return {
    tz: query.get('tz') ?? browserZone,
    period: query.get('period') ?? 'daily',
    start: query.get('start_date') ?? '',
    end: query.get('end_date') ?? '',
    groupBy: query.get('group_by') === 'provider' ? 'provider' : 'service',
  };
}

/** The link that shows what this page shows (the user id and the view), for sharing. */
function shareLink(identity, view) {
  const params = new URLSearchParams();
  if (identity.userId) params.set('user_id', identity.userId);
  params.set('tz', view.tz);
  params.set('period', view.period);
  if (view.start) params.set('start_date', view.start);
  if (view.end) params.set('end_date', view.end);
  params.set('group_by', view.groupBy);
  return `${location.pathname}?${params}`;
}

function rangeParams(view) {
  const params = new URLSearchParams({ tz: view.tz });
  if (view.start) params.set('start_date', view.start);
  if (view.end) params.set('end_date', view.end);
  return params;
}

function Identity({ identity, onChange }) {
  const [userId, setUserId] = useState(identity.userId);
  const [token, setToken] = useState(identity.token);
  const submit = (event) => {
    event.preventDefault();
    localStorage.setItem('callmeter.user_id', userId.trim());
    if (AUTH_MODE === 'on') sessionStorage.setItem('callmeter.token', token.trim());
    onChange({ userId: userId.trim(), token: token.trim() });
  };
  return html`<form class="controls" onSubmit=${submit} aria-label="Whose costs">
    ${AUTH_MODE === 'on' &&
    html`<label>Bearer token (user token or read key)
      <input type="password" value=${token} onInput=${(e) => setToken(e.target.value)} autocomplete="off" required />
    </label>`}
    <label>User id${AUTH_MODE === 'on' ? ' (optional)' : ''}
      <input value=${userId} onInput=${(e) => setUserId(e.target.value)} required=${AUTH_MODE === 'off'} data-testid="user-id" />
    </label>
    <button type="submit">Show costs</button>
  </form>`;
}

function Tile({ title, value, testId, live, children }) {
  return html`<div class=${`tile${live ? ' live' : ''}`} role="group" aria-label=${title}>
    <h2>${title}</h2>
    <p data-testid=${testId} aria-live=${live ? 'polite' : undefined}>${value ?? '…'}</p>
    ${children}
  </div>`;
}

const money = (value) => (value === undefined || value === null ? '…' : `$${value}`);

/** A table column: its header, a row's cell, and whether it holds numbers (right-aligned). */
const column = (label, value, num = false) => ({ label, value, num });
const COST = column('Cost', (row) => money(row.total_cost), true);
const EVENTS = column('Events', (row) => row.event_count, true);

function Table({ caption, columns, rows, testId, onRow }) {
  return html`<div class="scroll" tabindex="0" role="region" aria-label=${caption}>
    <table data-testid=${testId}>
      <caption>${caption}</caption>
      <thead><tr>${columns.map((c) => html`<th scope="col" class=${c.num ? 'num' : ''}>${c.label}</th>`)}</tr></thead>
      <tbody>
        ${rows.length === 0 && html`<tr><td colspan=${columns.length} class="muted">Nothing yet</td></tr>`}
        ${rows.map(
          (row) => html`<tr>
            ${columns.map((c, index) =>
              index === 0 && onRow
                ? html`<td><button class="secondary" onClick=${() => onRow(row)}>${c.value(row)}</button></td>`
                : html`<td class=${c.num ? 'num' : ''}>${c.value(row)}</td>`,
            )}
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** A section of the page that is one table under its heading (`${name}-title`); what follows the table comes as children. */
function TableSection({ name, title, anchor, children, ...table }) {
  return html`<section aria-labelledby=${`${name}-title`} id=${anchor}>
    <h2 id=${`${name}-title`}>${title}</h2>
    <${Table} ...${table} />
    ${children}
  </section>`;
}

function Timeline({ points, view, setView, identity }) {
  const element = useRef(null);
  useEffect(() => {
    if (!element.current || !points) return undefined;
    const plot = drawTimeline(element.current, points, view.groupBy);
    // The chart follows its box's width (a phone turned, a window resized).
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, element.current.clientWidth), height: 260 }));
    resize.observe(element.current);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, view.groupBy]);
  const csv = () =>
    downloadCsv(`/api/costs/timeline?${rangeParams(view)}&period=${view.period}&format=csv`, identity, 'timeline.csv');
  const set = (field) => (event) => setView({ ...view, [field]: event.target.value });
  return html`<section aria-labelledby="timeline-title">
    <h2 id="timeline-title">Cost over time</h2>
    <div class="controls">
      <label>Period
        <select value=${view.period} onChange=${set('period')} data-testid="period">
          <option value="daily">Daily</option><option value="weekly">Weekly</option><option value="monthly">Monthly</option>
        </select>
      </label>
      <label>From <input type="date" value=${view.start} onChange=${set('start')} /></label>
      <label>To <input type="date" value=${view.end} onChange=${set('end')} /></label>
      <label>Time zone <input value=${view.tz} onChange=${set('tz')} size="16" /></label>
      <label>Stack by
        <select value=${view.groupBy} onChange=${set('groupBy')}>
          <option value="service">Service</option><option value="provider">Provider</option>
        </select>
      </label>
      <button class="secondary" onClick=${csv}>Download CSV</button>
    </div>
    <div id="chart" ref=${element} role="img" aria-label=${`Stacked cost per ${view.period} bucket by ${view.groupBy}`} data-testid="chart"></div>
    <details>
      <summary>The chart as a table</summary>
      <${Table}
        caption="Cost per bucket"
        testId="timeline-table"
        columns=${[column('Bucket', (p) => p.date), COST, EVENTS]}
        rows=${points ?? []}
      />
    </details>
  </section>`;
}

function Breakdown({ session, identity, onClose }) {
  const [breakdown, setBreakdown] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    setBreakdown(null);
    if (session.status === 'ACTIVE')
      return openStream(`/api/sessions/${session.id}/cost-stream`, headersOf(identity), (_, data) => setBreakdown(data));
    getJson(`/api/sessions/${session.id}/cost-breakdown`, identity).then(setBreakdown, (e) => setError(e.message));
    return undefined;
  }, [session.id]);
  return html`<section aria-labelledby="breakdown-title" data-testid="breakdown">
    <h2 id="breakdown-title">Call ${session.room_name} <span class="muted">${session.id}</span></h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${breakdown &&
    html`<p class="muted" aria-live="polite">${breakdown.live ? 'In progress: updates as usage is stored' : 'Ended'}</p>
      <${Table}
        caption="What this call cost"
        testId="breakdown-table"
        columns=${[
          column('Provider', (i) => i.provider),
          column('Service', (i) => i.service),
          column('Units', (i) => `${i.quantity} ${i.unit}`, true),
          column('Cost', (i) => money(i.cost), true),
        ]}
        rows=${breakdown.items}
      />
      <p>Total <strong data-testid="breakdown-total">${money(breakdown.total_cost)}</strong></p>`}
    <button class="secondary" onClick=${onClose}>Close</button>
  </section>`;
}

function Sessions({ identity, refresh, onOpen }) {
  const [page, setPage] = useState(1);
  const [list, setList] = useState(null);
  const [costs, setCosts] = useState({});
  useEffect(() => {
    getJson(`/api/sessions/?page=${page}&limit=${PAGE_SIZE}`, identity).then(async (answer) => {
      setList(answer);
      const entries = await Promise.all(
        answer.sessions.map((s) =>
          getJson(`/api/sessions/${s.id}/costs`, identity).then(
            (card) => [s.id, card.total_cost_exact],
            () => [s.id, null],
          ),
        ),
      );
      setCosts(Object.fromEntries(entries));
    });
  }, [page, refresh]);
  const pages = list ? Math.max(1, Math.ceil(list.total / PAGE_SIZE)) : 1;
  return html`<${TableSection}
      name="sessions"
      title="Calls"
      caption=${`Calls, newest first (page ${page} of ${pages})`}
      testId="sessions-table"
      onRow=${onOpen}
      columns=${[
        column('Room', (s) => s.room_name),
        column('Status', (s) => s.status),
        column('Started', (s) => s.started_at ?? ''),
        column('Duration (s)', (s) => s.duration ?? '', true),
        column('Cost', (s) => money(costs[s.id]), true),
      ]}
      rows=${list?.sessions ?? []}
    >
      <div class="controls">
        <button class="secondary" disabled=${page <= 1} onClick=${() => setPage(page - 1)}>Newer</button>
        <button class="secondary" disabled=${page >= pages} onClick=${() => setPage(page + 1)}>Older</button>
      </div>
    </${TableSection}>`;
}

function Dashboard({ identity }) {
  const [view, setView] = useState(initialView);
  const [data, setData] = useState({});
  const [live, setLive] = useState(null);
  const [error, setError] = useState(null);
  const [selected, setSelected] = useState(null);
  const [refresh, setRefresh] = useState(0);
  useEffect(() => history.replaceState(null, '', shareLink(identity, view)), [view, identity]);
  useEffect(() => {
    const range = rangeParams(view);
    const load = (name, path) =>
      getJson(path, identity).then(
        (value) => setData((current) => ({ ...current, [name]: value })),
        (e) => setError(e.message),
      );
    load('summary', `/api/costs/summary?tz=${encodeURIComponent(view.tz)}`);
    load('timeline', `/api/costs/timeline?${range}&period=${view.period}`);
    load('agents', `/api/costs/by-agent?${range}`);
    load('unpriced', '/api/costs/unpriced');
    load('rates', `/api/rates${identity.userId ? `?user_id=${encodeURIComponent(identity.userId)}` : ''}`);
  }, [view, identity, refresh]);
  useEffect(
    () =>
      openStream('/api/costs/live', headersOf(identity), (_, message) => {
        setLive(message);
        setRefresh((n) => n + 1);
      }),
    [identity],
  );
  const { summary, timeline, agents, unpriced, rates } = data;
  return html`
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <div class="tiles">
      <${Tile} title="Total cost" value=${money(summary?.total_cost)} testId="tile-total" />
      <${Tile} title=${`This month (${view.tz})`} value=${money(summary?.this_month_cost)} testId="tile-month" />
      <${Tile} title="Calls in progress" value=${money(live?.total_cost ?? summary?.live_cost)} testId="tile-live" live=${true}>
        <span class="muted" data-testid="tile-live-calls">${live ? `${live.sessions.length} live` : ''}</span>
      </${Tile}>
      <${Tile} title="Unpriced events" value=${summary?.unpriced_event_count} testId="tile-unpriced">
        <a href="#unpriced" class="muted">What is unpriced</a>
      </${Tile}>
    </div>
    <${Timeline} points=${timeline} view=${view} setView=${setView} identity=${identity} />
    <${TableSection}
      name="agents"
      title="By agent"
      caption="Agents, most expensive first"
      testId="agents-table"
      columns=${[column('Agent', (a) => a.agent_name), COST, column('Calls', (a) => a.session_count, true), EVENTS]}
      rows=${agents ?? []}
    >
      <button class="secondary" onClick=${() => downloadCsv(`/api/costs/by-agent?${rangeParams(view)}&format=csv`, identity, 'agents.csv')}>
        Download CSV
      </button>
    </${TableSection}>
    <${Sessions} identity=${identity} refresh=${refresh} onOpen=${setSelected} />
    ${selected && html`<${Breakdown} session=${selected} identity=${identity} onClose=${() => setSelected(null)} />`}
    <${TableSection}
      name="unpriced"
      anchor="unpriced"
      title="Unpriced usage"
      caption="Usage no price applied to"
      testId="unpriced-table"
      columns=${[
        column('Provider', (u) => u.provider),
        column('Model', (u) => u.model),
        column('Event type', (u) => u.event_type),
        EVENTS,
      ]}
      rows=${unpriced ?? []}
    />
    <${TableSection}
      name="rates"
      title="Prices in force"
      caption=${`The first 100 of ${rates?.length ?? 0} prices (GET /api/rates)`}
      testId="rates-table"
      columns=${[
        column('Provider', (r) => r.provider),
        column('Model', (r) => r.model ?? ''),
        column('Unit', (r) => `${r.dimension} per ${r.per} ${r.unit}`),
        column('Price', (r) => `${r.price} ${r.currency}`, true),
        column('Scope', (r) => r.scope),
      ]}
      rows=${(rates ?? []).slice(0, 100)}
    />`;
}

function App() {
  const [identity, setIdentity] = useState(initialIdentity);
  const ready = AUTH_MODE === 'on' ? identity.token !== '' : identity.userId !== '';
  return html`<header>
      <h1>callmeter costs</h1>
      <${Identity} identity=${identity} onChange=${setIdentity} />
    </header>
    <main>
      ${ready ? html`<${Dashboard} identity=${identity} />` : html`<p>Enter whose costs to show.</p>`}
    </main>`;
}

const root = document.getElementById('app');
root.replaceChildren();
render(html`<${App} />`, root);
