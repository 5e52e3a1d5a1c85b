import {
  deliveriesQuery,
  redeliverySchema,
  webhookCreateBody,
  webhookCreatedSchema,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookRotatedSchema,
  webhookSchema,
} from '../../../schemas/http/webhooks.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { WebhookService } from './webhook-service.ts';

const routes = routeGroup({ tags: ['webhooks'], access: 'admin' });
const NOT_FOUND = {
  404: errorDoc('Unknown webhook (or another tenant’s, for a bound admin key)', 'Webhook not found'),
};
const NOT_RECORDED = { 503: { description: 'Not recorded: retry' } };

/** Webhook endpoints and their delivery log (docs/webhooks.md): admin keys, a bound one for its own tenant. */
export function webhookRoutes(webhooks: WebhookService): Route[] {
  return [
    routes.post('/api/webhooks', {
      summary: 'Register a webhook endpoint; its signing secret is in this answer only',
      status: 201,
      request: { body: webhookCreateBody },
      responses: NOT_RECORDED,
      response: { schema: webhookCreatedSchema },
      handle: async ({ body, caller }) => webhooks.create(body, caller),
    }),
    routes.get('/api/webhooks', {
      summary: 'The webhook endpoints, oldest first (never a secret)',
      response: { schema: webhookListSchema },
      handle: async ({ caller }) => webhooks.list(caller),
    }),
    routes.get('/api/webhooks/{webhook_id}', {
      summary: 'Read a webhook endpoint (never its secret)',
      responses: NOT_FOUND,
      response: { schema: webhookSchema },
      handle: async ({ path, caller }) => webhooks.get(path.webhook_id, caller),
    }),
    routes.delete('/api/webhooks/{webhook_id}', {
      summary: 'Delete a webhook endpoint: nothing more is sent to it',
      status: 204,
      responses: { ...NOT_FOUND, ...NOT_RECORDED },
      handle: async ({ path, caller }) => webhooks.remove(path.webhook_id, caller),
    }),
    routes.post('/api/webhooks/{webhook_id}/rotate-secret', {
      summary: 'A new signing secret, in this answer only; the previous one keeps signing for 24 hours',
      responses: { ...NOT_FOUND, ...NOT_RECORDED },
      response: { schema: webhookRotatedSchema },
      handle: async ({ path, caller }) => webhooks.rotate(path.webhook_id, caller),
    }),
    routes.get('/api/webhooks/{webhook_id}/deliveries', {
      summary: 'The delivery log: the endpoint’s newest messages, each with its attempts (status, latency, error)',
      request: { query: deliveriesQuery },
      responses: NOT_FOUND,
      response: { schema: webhookDeliveryListSchema },
      handle: async ({ path, query, caller }) => webhooks.deliveries(path.webhook_id, caller, query.limit),
    }),
    routes.post('/api/webhooks/{webhook_id}/deliveries/{message_id}/redeliver', {
      summary: 'Send a message again, with the same webhook-id: one attempt, as soon as the delivery sees it',
      status: 202,
      responses: {
        404: errorDoc('Unknown webhook or message', 'Message not found'),
        409: errorDoc('The endpoint is disabled', 'Webhook 0b6c… is disabled (every attempt failed for 5 days)'),
      },
      response: { schema: redeliverySchema },
      handle: async ({ path, caller }) => webhooks.redeliver(path.webhook_id, path.message_id, caller),
    }),
  ];
}
