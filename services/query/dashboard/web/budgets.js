// @ts-check
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { ApiError, getJson } from './api.js';
import { column, money, tableOf, Table } from './table.js';

/**
 * @typedef {import('./api.js').Schemas} Schemas
 * @typedef {import('./api.js').Caller} Caller
 * @typedef {Schemas['Budget']} Budget
 */

const html = htm.bind(h);
/** The most budgets the panel lists: a tenant may hold 10,000 (docs/budgets.md). */
const LISTED = 100;

/**
 * A day, or a day and a minute, in a zone, written the same in every browser (yyyy-mm-dd hh:mm).
 * @param {string} iso
 * @param {string} timeZone
 * @param {boolean} withTime
 */
function inZone(iso, timeZone, withTime) {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    ...(withTime ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } : {}),
  }).formatToParts(new Date(iso));
  const part = (/** @type {Intl.DateTimeFormatPartTypes} */ type) => parts.find((p) => p.type === type)?.value ?? '';
  const day = `${part('year')}-${part('month')}-${part('day')}`;
  return withTime ? `${day} ${part('hour')}:${part('minute')}` : day;
}

/** @param {Budget} budget */
function scopeOf(budget) {
  const whose = budget.agent_id === null ? 'tenant' : `agent ${budget.agent_id}`;
  const scope = budget.per_call ? `per call (${whose})` : whose;
  const only = Object.entries(budget.filter).map(([key, value]) => `${key} ${value}`);
  return only.length === 0 ? scope : `${scope}, ${only.join(', ')} only`;
}

/** @param {Budget} budget */
function periodOf(budget) {
  if (budget.period_start === null || budget.period_end === null) return 'each call';
  const day = (/** @type {string} */ iso) => html`<span class="day">${inZone(iso, budget.time_zone, false)}</span>`;
  return html`${budget.period} in ${budget.time_zone}: ${day(budget.period_start)} until ${day(budget.period_end)}`;
}

/** A share as a percentage with one decimal, rounded down (so that 99.99% never reads as 100%), 0 to 100. */
const percent = (/** @type {number} */ share) => Math.floor(Math.min(1, Math.max(0, share)) * 1000) / 10;

/**
 * The spend against the period's elapsed share: a bar filled to the share of the amount spent, with a
 * marker at the share of the period gone, and the same in words. The shares are floats for drawing
 * only; the amounts are the API's exact strings, in the other columns.
 * @param {{ budget: Budget, now: number }} props
 */
function BurnDown({ budget, now }) {
  if (budget.per_call) return html`<span data-testid="budget-cap">cap ${money(budget.amount)} per call</span>`;
  const start = Date.parse(budget.period_start ?? '');
  const end = Date.parse(budget.period_end ?? '');
  const spent = percent(Number(budget.spent) / Number(budget.amount));
  const elapsed = percent((now - start) / (end - start));
  const words = `${spent}% spent, ${elapsed}% of the period gone`;
  const ahead = spent > elapsed ? ' ahead' : '';
  return html`<span class="burn-down">
    <span
      class=${`bar${ahead}`}
      role="img"
      aria-label=${words}
      data-testid="burn-down"
      data-spent=${spent}
      data-elapsed=${elapsed}
    >
      <span class="spent" style=${`width: ${spent}%`}></span>
      <span class="elapsed" style=${`left: ${elapsed}%`}></span>
    </span>
    <span class="muted" aria-hidden="true">${words}</span>
  </span>`;
}

/** @param {Budget} budget */
function exhaustionOf(budget) {
  if (budget.per_call) return '';
  if (budget.projected_exhaustion_at !== null)
    return html`<time datetime=${budget.projected_exhaustion_at}>
      ${inZone(budget.projected_exhaustion_at, budget.time_zone, true)} ${budget.time_zone}
    </time>`;
  return budget.remaining === '0' ? 'reached' : 'not on course';
}

/**
 * The selected tenant's budgets (GET /api/budgets, an admin route): one request when the page loads and
 * one per refresh. A credential without the admin scope (a read key, a user token) is told so once, and
 * not asked again.
 * @param {{ identity: Caller, refresh: number }} props
 */
export function BudgetsPanel({ identity, refresh }) {
  const [budgets, setBudgets] = useState(/** @type {Budget[] | null} */ (null));
  const [problem, setProblem] = useState(/** @type {string | null} */ (null));
  const [forbidden, setForbidden] = useState(false);
  const [now, setNow] = useState(Date.now);
  useEffect(() => setForbidden(false), [identity]);
  useEffect(() => {
    if (forbidden) return;
    const tenant = identity.userId ? `?user_id=${encodeURIComponent(identity.userId)}` : '';
    /** @type {Promise<Budget[]>} */
    const answer = getJson(`/api/budgets${tenant}`, identity);
    answer.then(
      (list) => {
        setNow(Date.now());
        setBudgets(list);
        setProblem(null);
      },
      (/** @type {Error} */ e) => {
        if (e instanceof ApiError && e.status === 403) setForbidden(true);
        else setProblem(e.message);
      },
    );
  }, [identity, refresh, forbidden]);
  const listed = (budgets ?? []).slice(0, LISTED);
  const caption =
    (budgets?.length ?? 0) > LISTED ? `The first ${LISTED} of ${budgets?.length} budgets` : 'Budgets, oldest first';
  return html`<section class="budgets" aria-labelledby="budgets-title" data-testid="budgets">
    <h2 id="budgets-title">Budgets</h2>
    ${
      forbidden &&
      html`<p class="muted" data-testid="budgets-forbidden">
        Budgets are shown to an admin key (one bound to the tenant shows its own); this credential may not read them.
      </p>`
    }
    ${problem && html`<p class="error" role="alert">${problem}</p>`}
    ${
      !forbidden &&
      html`<${Table}
        caption=${caption}
        testId="budgets-table"
        ...${tableOf(listed, [
          column('Name', (b) => b.name),
          column('Scope', scopeOf),
          column('Period', periodOf),
          column('Amount', (b) => money(b.amount), true),
          column('Spent', (b) => (b.per_call ? '' : money(b.spent)), true),
          column('Remaining', (b) => (b.per_call ? '' : money(b.remaining)), true),
          column('Burn-down', (b) => html`<${BurnDown} budget=${b} now=${now} />`),
          column('Projected exhaustion', exhaustionOf),
        ])}
      />`
    }
  </section>`;
}

/**
 * A listed call's standing against its lowest per-call cap, from its cost card (read for its cost
 * anyway): nothing without a cap, else what it spent of the cap, marked once it is over.
 * @param {Schemas['SessionCostCard'] | null | undefined} card
 */
export function capCell(card) {
  const standing = card?.budget;
  if (standing === null || standing === undefined) return '';
  const over = !standing.allowed && html`<span class="badge" data-testid="over-cap">over cap</span> `;
  return html`${over}${money(standing.spent)} of ${money(standing.cap)}`;
}
