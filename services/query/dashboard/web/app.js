// @ts-check
import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { AUTH_MODE, downloadCsv, getJson, headersOf } from './api.js';
import { BudgetsPanel, capCell } from './budgets.js';
import { drawTimeline } from './chart.js';
import { openStream } from './live.js';
import { column, money, tableOf, Table, TableSection } from './table.js';

/**
 * The API's answers, typed by their response schemas (generated from /openapi.json).
 * @typedef {import('../../../../test/openapi/callmeter-api.ts').components['schemas']} Schemas
 * @typedef {import('preact').ComponentChild} Child
 * @typedef {import('preact').ComponentChildren} Children
 * @typedef {import('./chart.js').GroupBy} GroupBy
 * @typedef {import('./api.js').Caller} Caller
 * @typedef {{ tz: string, period: string, start: string, end: string, groupBy: GroupBy }} View
 * @typedef {{
 *   summary?: Schemas['CostSummary'],
 *   timeline?: Schemas['TimelinePoint'][],
 *   agents?: Schemas['AgentCost'][],
 *   unpriced?: Schemas['UnpricedUsage'][],
 *   rates?: Schemas['RateEntry'][],
 * }} Data the answers the tiles and tables show, each once it has come
 */

const html = htm.bind(h);
const PAGE_SIZE = 20;
const query = new URLSearchParams(location.search);

// Who the page reads for: with AUTH_MODE=off a user id (kept in this browser, or from the link), with
// AUTH_MODE=on a bearer token (a user token or a read key, kept for this tab) and optionally a user id.
/** @returns {Caller} */
function initialIdentity() {
  const userId = query.get('user_id') ?? localStorage.getItem('callmeter.user_id') ?? '';
  const token = sessionStorage.getItem('callmeter.token') ?? '';
  return { userId, token };
}

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** @returns {View} */
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
/**
 * @param {Caller} identity
 * @param {View} view
 */
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

/** @param {View} view */
function rangeParams(view) {
  const params = new URLSearchParams({ tz: view.tz });
  if (view.start) params.set('start_date', view.start);
  if (view.end) params.set('end_date', view.end);
  return params;
}

/** The value of the input or select an event came from. */
const valueOf = (/** @type {Event} */ event) =>
  /** @type {HTMLInputElement | HTMLSelectElement} */ (event.target).value;

/** @param {{ identity: Caller, onChange: (identity: Caller) => void }} props */
function Identity({ identity, onChange }) {
  const [userId, setUserId] = useState(identity.userId);
  const [token, setToken] = useState(identity.token);
  const submit = (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    localStorage.setItem('callmeter.user_id', userId.trim());
    if (AUTH_MODE === 'on') sessionStorage.setItem('callmeter.token', token.trim());
    onChange({ userId: userId.trim(), token: token.trim() });
  };
  return html`<form class="controls" onSubmit=${submit} aria-label="Whose costs">
    ${AUTH_MODE === 'on' &&
    html`<label>Bearer token (user token or read key)
      <input type="password" value=${token} onInput=${(/** @type {Event} */ e) => setToken(valueOf(e))} autocomplete="off" required />
    </label>`}
    <label>User id${AUTH_MODE === 'on' ? ' (optional)' : ''}
      <input value=${userId} onInput=${(/** @type {Event} */ e) => setUserId(valueOf(e))} required=${AUTH_MODE === 'off'} data-testid="user-id" />
    </label>
    <button type="submit">Show costs</button>
  </form>`;
}

/** @param {{ title: string, value: Child, testId: string, live?: boolean, children?: Children }} props */
function Tile({ title, value, testId, live, children }) {
  return html`<div class=${`tile${live ? ' live' : ''}`} role="group" aria-label=${title}>
    <h2>${title}</h2>
    <p data-testid=${testId} aria-live=${live ? 'polite' : undefined}>${value ?? '…'}</p>
    ${children}
  </div>`;
}

const COST = column('Cost', (/** @type {{ total_cost: string }} */ row) => money(row.total_cost), true);
const EVENTS = column('Events', (/** @type {{ event_count: number }} */ row) => row.event_count, true);

/**
 * @param {{
 *   points: Schemas['TimelinePoint'][] | undefined,
 *   view: View,
 *   setView: (view: View) => void,
 *   identity: Caller,
 * }} props
 */
function Timeline({ points, view, setView, identity }) {
  const element = useRef(/** @type {HTMLDivElement | null} */ (null));
  useEffect(() => {
    // The chart's box: the same element for as long as the page shows the timeline.
    const box = element.current;
    if (!box || !points) return undefined;
    const plot = drawTimeline(box, points, view.groupBy);
    // The chart follows its box's width (a phone turned, a window resized).
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, box.clientWidth), height: 260 }));
    resize.observe(box);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, view.groupBy]);
  const csv = () =>
    downloadCsv(`/api/costs/timeline?${rangeParams(view)}&period=${view.period}&format=csv`, identity, 'timeline.csv');
  /** @param {'period' | 'start' | 'end' | 'tz' | 'groupBy'} field */
  const set = (field) => (/** @type {Event} */ event) => {
    const value = valueOf(event);
    // The stack-by select offers only the two groupings.
    setView({ ...view, [field]: value, groupBy: field === 'groupBy' ? /** @type {GroupBy} */ (value) : view.groupBy });
  };
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
        ...${tableOf(points ?? [], [column('Bucket', (p) => p.date), COST, EVENTS])}
      />
    </details>
  </section>`;
}

/** @param {{ session: Schemas['Session'], identity: Caller, onClose: () => void }} props */
function Breakdown({ session, identity, onClose }) {
  const [breakdown, setBreakdown] = useState(
    /** @type {Schemas['CostBreakdown'] | Schemas['CostStreamMessage'] | null} */ (null),
  );
  const [error, setError] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    setBreakdown(null);
    if (session.status === 'ACTIVE')
      return openStream(
        `/api/sessions/${session.id}/cost-stream`,
        headersOf(identity),
        (_, /** @type {Schemas['CostStreamMessage']} */ data) => setBreakdown(data),
      );
    /** @type {Promise<Schemas['CostBreakdown']>} */
    const answer = getJson(`/api/sessions/${session.id}/cost-breakdown`, identity);
    answer.then(setBreakdown, (/** @type {Error} */ e) => setError(e.message));
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
        ...${tableOf(breakdown.items, [
          column('Provider', (i) => i.provider),
          column('Service', (i) => i.service),
          column('Units', (i) => `${i.quantity} ${i.unit}`, true),
          column('Cost', (i) => money(i.cost), true),
        ])}
      />
      <p>Total <strong data-testid="breakdown-total">${money(breakdown.total_cost)}</strong></p>`}
    <button class="secondary" onClick=${onClose}>Close</button>
  </section>`;
}

/** @param {{ identity: Caller, refresh: number, onOpen: (session: Schemas['Session']) => void }} props */
function Sessions({ identity, refresh, onOpen }) {
  const [page, setPage] = useState(1);
  const [list, setList] = useState(/** @type {Schemas['SessionList'] | null} */ (null));
  // Each listed call's cost card: its cost, and its standing against its per-call cap.
  const [cards, setCards] = useState(/** @type {Record<string, Schemas['SessionCostCard'] | null>} */ ({}));
  useEffect(() => {
    /** @type {Promise<Schemas['SessionList']>} */
    const listed = getJson(`/api/sessions/?page=${page}&limit=${PAGE_SIZE}`, identity);
    listed.then(async (answer) => {
      setList(answer);
      const entries = await Promise.all(
        answer.sessions.map((s) => {
          /** @type {Promise<Schemas['SessionCostCard']>} */
          const card = getJson(`/api/sessions/${s.id}/costs`, identity);
          return card.then(
            /** @returns {[string, Schemas['SessionCostCard'] | null]} */ (c) => [s.id, c],
            /** @returns {[string, Schemas['SessionCostCard'] | null]} */ () => [s.id, null],
          );
        }),
      );
      setCards(Object.fromEntries(entries));
    });
  }, [page, refresh]);
  const pages = list ? Math.max(1, Math.ceil(list.total / PAGE_SIZE)) : 1;
  return html`<${TableSection}
      name="sessions"
      title="Calls"
      caption=${`Calls, newest first (page ${page} of ${pages})`}
      testId="sessions-table"
      onRow=${onOpen}
      ...${tableOf(list?.sessions ?? [], [
        column('Room', (s) => s.room_name),
        column('Status', (s) => s.status),
        column('Started', (s) => s.started_at ?? ''),
        column('Duration (s)', (s) => s.duration ?? '', true),
        column('Cost', (s) => money(cards[s.id]?.total_cost_exact), true),
        column('Per-call cap', (s) => capCell(cards[s.id])),
      ])}
    >
      <div class="controls">
        <button class="secondary" disabled=${page <= 1} onClick=${() => setPage(page - 1)}>Newer</button>
        <button class="secondary" disabled=${page >= pages} onClick=${() => setPage(page + 1)}>Older</button>
      </div>
    </${TableSection}>`;
}

/** @param {{ identity: Caller }} props */
function Dashboard({ identity }) {
  const [view, setView] = useState(initialView);
  const [data, setData] = useState(/** @type {Data} */ ({}));
  const [live, setLive] = useState(/** @type {Schemas['LiveCosts'] | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [selected, setSelected] = useState(/** @type {Schemas['Session'] | null} */ (null));
  const [refresh, setRefresh] = useState(0);
  useEffect(() => history.replaceState(null, '', shareLink(identity, view)), [view, identity]);
  useEffect(() => {
    const range = rangeParams(view);
    /**
     * @template {keyof Data} K
     * @param {K} name
     * @param {string} path
     */
    const load = (name, path) => {
      /** @type {Promise<Data[K]>} */
      const answer = getJson(path, identity);
      return answer.then(
        (value) => setData((current) => ({ ...current, [name]: value })),
        (/** @type {Error} */ e) => setError(e.message),
      );
    };
    load('summary', `/api/costs/summary?tz=${encodeURIComponent(view.tz)}`);
    load('timeline', `/api/costs/timeline?${range}&period=${view.period}`);
    load('agents', `/api/costs/by-agent?${range}`);
    load('unpriced', '/api/costs/unpriced');
    load('rates', `/api/rates${identity.userId ? `?user_id=${encodeURIComponent(identity.userId)}` : ''}`);
  }, [view, identity, refresh]);
  useEffect(
    () =>
      openStream('/api/costs/live', headersOf(identity), (_, /** @type {Schemas['LiveCosts']} */ message) => {
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
      ...${tableOf(agents ?? [], [
        column('Agent', (a) => a.agent_name),
        COST,
        column('Calls', (a) => a.session_count, true),
        EVENTS,
      ])}
    >
      <button class="secondary" onClick=${() => downloadCsv(`/api/costs/by-agent?${rangeParams(view)}&format=csv`, identity, 'agents.csv')}>
        Download CSV
      </button>
    </${TableSection}>
    <${BudgetsPanel} identity=${identity} refresh=${refresh} />
    <${Sessions} identity=${identity} refresh=${refresh} onOpen=${setSelected} />
    ${selected && html`<${Breakdown} session=${selected} identity=${identity} onClose=${() => setSelected(null)} />`}
    <${TableSection}
      name="unpriced"
      anchor="unpriced"
      title="Unpriced usage"
      caption="Usage no price applied to"
      testId="unpriced-table"
      ...${tableOf(unpriced ?? [], [
        column('Provider', (u) => u.provider),
        column('Model', (u) => u.model),
        column('Event type', (u) => u.event_type),
        EVENTS,
      ])}
    />
    <${TableSection}
      name="rates"
      title="Prices in force"
      caption=${`The first 100 of ${rates?.length ?? 0} prices (GET /api/rates)`}
      testId="rates-table"
      ...${tableOf((rates ?? []).slice(0, 100), [
        column('Provider', (r) => r.provider),
        column('Model', (r) => r.model ?? ''),
        column('Unit', (r) => `${r.dimension} per ${r.per} ${r.unit}`),
        column('Price', (r) => `${r.price} ${r.currency}`, true),
        column('Scope', (r) => r.scope),
      ])}
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
if (root === null) throw new Error('the page has no #app element');
root.replaceChildren();
render(html`<${App} />`, root);
