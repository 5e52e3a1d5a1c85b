import { parseArgs } from 'node:util';

// `npm run keys -- create --scope ingest [--user-id A] [--name N] [--expires-at ISO]`, `list`, `revoke <id>`:
// the admin key API (POST/GET/DELETE /api/admin/keys) from a shell. It talks to a running callmeter
// (CALLMETER_URL, default http://127.0.0.1:8080) with an admin credential (CALLMETER_ADMIN_KEY, else
// ADMIN_API_KEY), so a key made here is durable and revoked everywhere exactly as one made over HTTP.

const USAGE = `usage: npm run keys -- <command>
  create --scope ingest|read|admin [--user-id <tenant>] [--name <text>] [--expires-at <ISO time>]
  list
  revoke <key id>
environment: CALLMETER_URL (default http://127.0.0.1:8080), CALLMETER_ADMIN_KEY or ADMIN_API_KEY`;

async function main(argv: readonly string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      scope: { type: 'string' },
      'user-id': { type: 'string' },
      name: { type: 'string' },
      'expires-at': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const [command, id] = positionals;
  if (values.help || command === undefined) return fail(USAGE);
  const base = (process.env.CALLMETER_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  const adminKey = process.env.CALLMETER_ADMIN_KEY ?? process.env.ADMIN_API_KEY;
  if (adminKey === undefined || adminKey === '')
    return fail('set CALLMETER_ADMIN_KEY (or ADMIN_API_KEY) to an admin credential');
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  let response: Response;
  switch (command) {
    case 'create': {
      if (values.scope === undefined) return fail('create needs --scope ingest|read|admin');
      const body = {
        scope: values.scope,
        user_id: values['user-id'],
        name: values.name,
        expires_at: values['expires-at'],
      };
      response = await fetch(`${base}/api/admin/keys`, { method: 'POST', headers, body: JSON.stringify(body) });
      break;
    }
    case 'list':
      response = await fetch(`${base}/api/admin/keys`, { headers });
      break;
    case 'revoke':
      if (id === undefined) return fail('revoke needs the key id');
      response = await fetch(`${base}/api/admin/keys/${encodeURIComponent(id)}`, { method: 'DELETE', headers });
      break;
    default:
      return fail(`unknown command ${command}\n${USAGE}`);
  }
  const text = await response.text();
  if (!response.ok) return fail(`${response.status} ${text}`);
  process.stdout.write(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
  if (command === 'create') process.stderr.write('The key is shown this once: store it now.\n');
  return 0;
}

function fail(message: string): number {
  process.stderr.write(`${message}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`keys: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
