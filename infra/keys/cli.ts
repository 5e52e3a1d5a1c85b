import { parseArgs } from 'node:util';

// `npm run keys -- create --scope ingest [--user-id A] [--name N] [--expires-at ISO]`, `list`, `revoke <id>`:
// the admin key API (POST/GET/DELETE /api/admin/keys) from a shell. It talks to a running callmeter
// (CALLMETER_URL, default http://127.0.0.1:8080) with an admin credential (CALLMETER_ADMIN_KEY, else
// ADMIN_API_KEY), so a key made here is durable and revoked everywhere exactly as one made over HTTP.
// `reissue-auth-off` is the step of switching AUTH_MODE from off to on: every live key made while off
// (by anyone who could reach the port) is revoked and replaced by a new key of the same scope, tenant,
// name and expiry, made by the admin credential; the new secrets are printed for the operator to hand out.

const USAGE = `usage: npm run keys -- <command>
  create --scope ingest|read|admin [--user-id <tenant>] [--name <text>] [--expires-at <ISO time>]
  list
  revoke <key id>
  reissue-auth-off   re-issue every live key created while AUTH_MODE=off (they are refused with AUTH_MODE=on)
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
    case 'reissue-auth-off':
      return reissueAuthOff(base, headers);
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

interface ListedKey {
  readonly id: string;
  readonly name: string | null;
  readonly scope: string;
  readonly user_id: string | null;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  readonly created_while_auth_off?: boolean;
}

async function reissueAuthOff(base: string, headers: Record<string, string>): Promise<number> {
  const listing = await fetch(`${base}/api/admin/keys`, { headers });
  if (!listing.ok) return fail(`${listing.status} ${await listing.text()}`);
  const now = Date.now();
  const marked = ((await listing.json()) as ListedKey[]).filter(
    (key) =>
      key.created_while_auth_off === true &&
      key.revoked_at === null &&
      (key.expires_at === null || Date.parse(key.expires_at) > now),
  );
  const reissued: unknown[] = [];
  for (const key of marked) {
    // Revoked first: the old key opens nothing with AUTH_MODE=on, and its slot counts against API_KEYS_PER_TENANT.
    const revoked = await fetch(`${base}/api/admin/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE', headers });
    if (!revoked.ok) return fail(`revoking ${key.id}: ${revoked.status} ${await revoked.text()}`);
    const body = {
      scope: key.scope,
      user_id: key.user_id ?? undefined,
      name: key.name ?? undefined,
      expires_at: key.expires_at ?? undefined,
    };
    const created = await fetch(`${base}/api/admin/keys`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!created.ok)
      return fail(`re-issuing ${key.id} (revoked; create it by hand): ${created.status} ${await created.text()}`);
    reissued.push({ replaces: key.id, ...((await created.json()) as object) });
  }
  process.stdout.write(`${JSON.stringify(reissued, null, 2)}\n`);
  process.stderr.write(
    reissued.length === 0
      ? 'No live key was created while AUTH_MODE=off.\n'
      : `${reissued.length} key(s) re-issued: the new keys are shown this once; hand each to the holder of the key it replaces.\n`,
  );
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
