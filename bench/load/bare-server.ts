import Router from '@koa/router';
import Koa from 'koa';

/**
 * The baseline of ingest_single_events_per_s: a bare Koa route that reads the JSON body and answers
 * {}, on the same machine, ports and load as the ingest service.
 */
const app = new Koa();
const router = new Router();
router.post('/bare', async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  JSON.parse(Buffer.concat(chunks).toString('utf8'));
  ctx.status = 200;
  ctx.body = '{}';
  ctx.type = 'application/json';
});
router.get('/healthz', (ctx) => {
  ctx.body = '{}';
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1');
