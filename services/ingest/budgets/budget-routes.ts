import {
  budgetCreateBody,
  budgetListQuery,
  budgetListSchema,
  budgetPatchBody,
  budgetSchema,
  sessionBudgetSchema,
} from '../../../schemas/http/budgets.ts';
import { WORKER_DATA } from '../../shared/auth/access.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { SessionService } from '../sessions/session-service.ts';
import type { BudgetGate } from './budget-gate.ts';
import type { BudgetService } from './budget-service.ts';

const routes = routeGroup({ tags: ['budgets'], access: 'admin' });
const NOT_FOUND = {
  404: errorDoc('Unknown budget (or another tenant’s, for a bound admin key)', 'Budget not found'),
};
const NOT_RECORDED = { 503: { description: 'Not recorded: retry' } };

/** Budgets, alerts and caps (docs/budgets.md): admin keys, a bound one for its own tenant. */
export function budgetRoutes(budgets: BudgetService): Route[] {
  return [
    routes.post('/api/budgets', {
      summary: 'Set a budget: a tenant’s or an agent’s spend per period, or a cap on every call',
      status: 201,
      request: { body: budgetCreateBody },
      responses: {
        ...NOT_RECORDED,
        409: errorDoc(
          'The tenant holds the most budgets one may',
          'User tenant-1 has 10000 budgets, the most one user may hold: delete one first',
        ),
      },
      response: { schema: budgetSchema },
      handle: async ({ body, caller }) => budgets.create(body, caller),
    }),
    routes.get('/api/budgets', {
      summary: 'The budgets, oldest first, each with this period’s spend',
      request: { query: budgetListQuery },
      response: { schema: budgetListSchema },
      handle: async ({ query, caller }) => budgets.list(caller, query.user_id),
    }),
    routes.get('/api/budgets/{budget_id}', {
      summary: 'Read a budget with this period’s spend, what remains and when it runs out at this rate',
      responses: NOT_FOUND,
      response: { schema: budgetSchema },
      handle: async ({ path, caller }) => budgets.get(path.budget_id, caller),
    }),
    routes.patch('/api/budgets/{budget_id}', {
      summary: 'Change a budget’s name, amount, thresholds, action or filter',
      request: { body: budgetPatchBody },
      responses: { ...NOT_FOUND, ...NOT_RECORDED },
      response: { schema: budgetSchema },
      handle: async ({ path, body, caller }) => budgets.update(path.budget_id, body, caller),
    }),
    routes.delete('/api/budgets/{budget_id}', {
      summary: 'Delete a budget: it alerts and blocks no more',
      status: 204,
      responses: { ...NOT_FOUND, ...NOT_RECORDED },
      handle: async ({ path, caller }) => budgets.remove(path.budget_id, caller),
    }),
  ];
}

const callRoutes = routeGroup({ tags: ['budgets'], access: WORKER_DATA });

/** A running call's standing against its caps, for the worker that runs it (docs/budgets.md#caps). */
export function sessionBudgetRoutes(sessions: Pick<SessionService, 'get'>, gate: BudgetGate): Route[] {
  return [
    callRoutes.get('/api/sessions/{session_id}/budget', {
      summary:
        'Whether the call may go on: its spend against the lowest per-call cap, and its scope’s blocking budgets',
      responses: { 404: errorDoc('Unknown session (or another tenant’s)', 'Session not found') },
      response: { schema: sessionBudgetSchema },
      handle: async ({ path, tenant }) => gate.ofCall(await sessions.get(path.session_id, tenant)),
    }),
  ];
}
