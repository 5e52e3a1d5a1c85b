import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { RouteRegistrar } from '../../shared/http/create-app.ts';

const WEB = path.join(import.meta.dirname, 'web');
const require = createRequire(import.meta.url);
/** A package's folder, found from its entry point (some packages do not export their package.json). */
function packageDir(name: string): string {
  let dir = path.dirname(require.resolve(name));
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') dir = path.dirname(dir);
  return dir;
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const MAP = 'application/json; charset=utf-8';

/**
 * Every file the page loads, from this service's own folder and node_modules: nothing from a CDN,
 * no build step. The browser resolves the bare imports (`preact`, `htm`, `uplot`) through the
 * page's import map to these paths.
 */
export const DASHBOARD_FILES: Readonly<Record<string, { readonly file: () => string; readonly type: string }>> = {
  'app.js': { file: () => path.join(WEB, 'app.js'), type: JS },
  'api.js': { file: () => path.join(WEB, 'api.js'), type: JS },
  'table.js': { file: () => path.join(WEB, 'table.js'), type: JS },
  'budgets.js': { file: () => path.join(WEB, 'budgets.js'), type: JS },
  'live.js': { file: () => path.join(WEB, 'live.js'), type: JS },
  'chart.js': { file: () => path.join(WEB, 'chart.js'), type: JS },
  'style.css': { file: () => path.join(WEB, 'style.css'), type: CSS },
  'vendor/preact.mjs': { file: () => path.join(packageDir('preact'), 'dist/preact.mjs'), type: JS },
  // The source maps the preact files name, so that a browser's developer tools find them here too.
  'vendor/preact.mjs.map': { file: () => path.join(packageDir('preact'), 'dist/preact.mjs.map'), type: MAP },
  'vendor/hooks.mjs.map': { file: () => path.join(packageDir('preact'), 'hooks/dist/hooks.mjs.map'), type: MAP },
  'vendor/hooks.mjs': { file: () => path.join(packageDir('preact'), 'hooks/dist/hooks.mjs'), type: JS },
  'vendor/htm.mjs': { file: () => path.join(packageDir('htm'), 'dist/htm.mjs'), type: JS },
  'vendor/uplot.mjs': { file: () => path.join(packageDir('uplot'), 'dist/uPlot.esm.js'), type: JS },
  'vendor/uplot.css': { file: () => path.join(packageDir('uplot'), 'dist/uPlot.min.css'), type: CSS },
};

/**
 * GET /dashboard (the page) and its files, served without a credential: the page holds no data,
 * and asks for a user id (AUTH_MODE=off) or a bearer token (on) before it reads the API.
 */
export function dashboardRoutes(authMode: 'off' | 'on'): RouteRegistrar {
  return (router: Router) => {
    router.get('/dashboard', async (ctx) => {
      const page = await readFile(path.join(WEB, 'index.html'), 'utf8');
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = page.replace('data-auth-mode="off"', `data-auth-mode="${authMode}"`);
    });
    const serve = (name: string) => async (ctx: Context & { params: Record<string, string> }) => {
      const asset = DASHBOARD_FILES[`${name}${ctx.params.file ?? ''}`];
      if (asset === undefined) return;
      ctx.type = asset.type;
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = await readFile(asset.file());
    };
    router.get('/dashboard/vendor/:file', serve('vendor/'));
    router.get('/dashboard/:file', serve(''));
  };
}
