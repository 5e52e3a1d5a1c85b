import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type Router from '@koa/router';
// Its path helper alone: the package's index loads the whole browser bundle (about 0.35 s of every start).
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import { sendJson } from './send-json.ts';

// Served from the local swagger-ui-dist package: the docs page loads nothing from a CDN.
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>callmeter API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });</script>
</body>
</html>
`;

/** GET /openapi.json (the generated document) and GET /docs (a browsable page over it). */
export function registerDocsRoutes(router: Router, document: Readonly<Record<string, unknown>>): void {
  const serialized = JSON.stringify(document);
  router.get('/openapi.json', (ctx) => sendJson(ctx, 200, document, serialized));
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/assets/:file', async (ctx) => {
    const type = ASSETS[ctx.params.file ?? ''];
    if (type === undefined) return;
    ctx.body = await readFile(path.join(getAbsoluteFSPath(), ctx.params.file!));
    ctx.set('Content-Type', type);
    ctx.set('Cache-Control', 'public, max-age=86400');
  });
}
