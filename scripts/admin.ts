/**
 * `npm run admin -- <command>`: the operator CLI over the operator API.
 * Run with no command for help. Talks to --url (or GATEWAY_URL, default the
 * local dev gateway) with ADMIN_TOKEN (or the one in .dev.vars).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { humanDuration } from '../src/duration';
import type { RatePolicy } from '../src/types/wire';
import { segments } from '../ui/lib/admin-client';
import { keyCheckText } from '../ui/lib/key-check';
import { asFields } from './admin/as-fields';
import { adminToken, CliError, type Client, client } from './admin/client';
import { CONFIG_HELP, ConfigRefused, runConfig } from './admin/config';
import { historyTable } from './admin/history-table';
import { importOperations } from './admin/openapi-import';
import { printable } from './admin/printable';
import { tokenRow } from './admin/token-row';
import { exportStatus, replay } from './admin/usage-export';
import { localGatewayUrl } from './local-gateway';

const HELP = `Usage: npm run admin -- <command> [arguments] [options]

Tenants
  tenant create --name NAME [--platform-key KEY] [--scopes LIST] [--token-name NAME] [--expires-in SECONDS] [--cors-origin ORIGIN]... [--plan PLAN] [--force]
  tenant list [--page-size N] [--cursor CURSOR]
  tenant get TENANT_ID
  tenant update TENANT_ID [--name NAME] [--platform-key KEY | --new-platform-key] [--cors-origin ORIGIN]... [--no-cors-origins]
                          [--plan PLAN | --no-plan] [--force]
  tenant disable TENANT_ID | tenant enable TENANT_ID | tenant delete TENANT_ID
Tokens
  token issue TENANT_ID --name NAME [--scopes LIST] [--expires-in SECONDS | --expires-at ISO] [token limits]
  token list TENANT_ID
  token limits TENANT_ID TOKEN_ID [--policy NAME=LIMIT/WINDOW_S[:fixed]]... [--daily N] [--monthly N] | --reset
  token rotate TENANT_ID TOKEN_ID [--overlap SECONDS | --old-valid-until ISO]
  token revoke TENANT_ID TOKEN_ID [--with-successors]
Plans (named limits tenants are on; a tenant's own limits still win)
  plan list
  plan get PLAN
  plan set PLAN [--policy NAME=LIMIT/WINDOW_S[:fixed]]... [--daily N] [--monthly N] [--group GROUP:daily=N]...
                [--limiter leased|exact]    (every tenant on it takes it before the answer)
  plan remove PLAN                          (only a plan no tenant is on)
Partner portal, OAuth and partners' keys (docs/OAUTH.md)
  portal link TENANT_ID [--expires-in SECONDS] [--manage]
                        (a usage:read token in the link's #fragment; 60..3600 s, default 900;
                         --manage: partner:manage too, to approve apps and manage its own keys)
  partner access TENANT_ID [--scopes full,...] [--dynamic-clients on|off] [--max-keys N]
                        (what its partner may grant; without options, prints it)
  oauth clients [--cursor ID]                (the OAuth clients registered, newest first)
  oauth register --name NAME --redirect URI [--redirect URI]...   (a vetted public client)
  oauth remove CLIENT_ID                     (its grants can no longer refresh)
Limits, cache, audit
  limits set TENANT_ID [--policy NAME=LIMIT/WINDOW_S[:fixed]]... [--daily N] [--monthly N] [--group GROUP:daily=N]...
                        [--limiter leased|exact]
  limits reset TENANT_ID
  usage TENANT_ID [--history 7d]        (with --history: requests per day, with a bar chart)
  usage export TENANT_ID [--from DATE] [--to DATE] [--archive]
                                        (the usage export by day: billable, delivered, dead, backlog, lag)
  usage replay --tenant TENANT_ID --from DATE|ISO --to DATE|ISO
                                        (re-sends the range's archived events to the sink, same ids)
  cache purge TENANT_ID
  audit [--tenant TENANT_ID] [--actor EMAIL|admin-token] [--action NAME|PREFIX.]
        [--since ISO] [--until ISO] [--page N] [--page-size N]
  reencrypt
${CONFIG_HELP}
Platform operations
  operations list                       (built-in and declared, with group, scope, cost, cache)
  operations import OPENAPI.json        (prints a PLATFORM_OPERATIONS value for the operations of an
                                         OpenAPI 3 document the gateway does not serve yet, to review)

Platform keys: prefer the PLATFORM_KEY environment variable to --platform-key, which shows in
  the process list and shell history (tenant create reads PLATFORM_KEY when --platform-key is absent;
  tenant update --new-platform-key reads it). A key is checked with the platform first (one cheap
  read, as the console does); one it refuses, or that cannot be checked, is set only with --force.
Limits: a policy counts in a sliding window unless it ends in :fixed. --limiter leased (default) lets
  isolates admit from short leases (revocation and limits changes reach every isolate within
  LEASE_MAX_MS); exact asks the TenantGuard on every request (refused on the very next request).
  A token's own limits (token issue/limits) are counted besides its tenant's.
Scopes: comma-separated scopes (teams:read, sessions:write, ...) or presets (full, read-only; neither has
  an apikeys scope nor token:rotate, which lets a token rotate itself in the partner portal). DANGER: apikeys:* scopes let a tenant manage the platform account's API keys,
  which other tenants of that account may use; apikeys:admin also shows them unmasked.
Options: --url URL (default $GATEWAY_URL, else the gateway npm start runs: its PORT, or
  http://127.0.0.1:8787), --json (print the raw data)`;

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    name: { type: 'string' },
    'platform-key': { type: 'string' },
    scopes: { type: 'string' },
    'token-name': { type: 'string' },
    'expires-in': { type: 'string' },
    'expires-at': { type: 'string' },
    overlap: { type: 'string' },
    'old-valid-until': { type: 'string' },
    policy: { type: 'string', multiple: true },
    daily: { type: 'string' },
    monthly: { type: 'string' },
    group: { type: 'string', multiple: true },
    tenant: { type: 'string' },
    actor: { type: 'string' },
    action: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    page: { type: 'string' },
    'page-size': { type: 'string' },
    cursor: { type: 'string' },
    'cors-origin': { type: 'string', multiple: true },
    'no-cors-origins': { type: 'boolean' },
    'new-platform-key': { type: 'boolean' },
    limiter: { type: 'string' },
    history: { type: 'string' },
    reset: { type: 'boolean' },
    'with-successors': { type: 'boolean' },
    plan: { type: 'string' },
    'no-plan': { type: 'boolean' },
    select: { type: 'string' },
    out: { type: 'string' },
    sealed: { type: 'boolean' },
    force: { type: 'boolean' },
    manage: { type: 'boolean' },
    'dynamic-clients': { type: 'string' },
    'max-keys': { type: 'string' },
    redirect: { type: 'string', multiple: true },
    from: { type: 'string' },
    to: { type: 'string' },
    archive: { type: 'boolean' },
  },
});

const [command = '', sub = '', ...args] = positionals;
const num = (name: string, v: string | undefined) => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new CliError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
};
const need = (v: string | undefined, what: string) => {
  if (!v) throw new CliError(`Missing ${what}. Run "npm run admin -- --help".`);
  return v;
};
/** Said on stderr whenever a token is given an API key scope. */
function warnOnApiKeyScopes(scopes: string[]) {
  const dangerous = scopes.filter((s) => s.startsWith('apikeys:'));
  if (dangerous.length === 0) return;
  console.error(
    `warning: ${dangerous.join(', ')} lets this token manage the platform account's API keys, ` +
      `which every tenant of that account may depend on${
        dangerous.includes('apikeys:admin') ? ', and see them unmasked' : ''
      }. Grant it only to a tenant you trust with the platform account itself.`,
  );
}

const tokenSpec = () => {
  const limits = tokenLimits();
  if (o.scopes) warnOnApiKeyScopes(o.scopes.split(',').map((s) => s.trim()));
  return {
    name: o.name ?? o['token-name'] ?? 'default',
    ...(o.scopes ? { scopes: o.scopes.split(',').map((s) => s.trim()) } : {}),
    ...(o['expires-in'] ? { expires_in_s: num('expires-in', o['expires-in']) } : {}),
    ...(o['expires-at'] ? { expires_at: o['expires-at'] } : {}),
    ...(limits ? { limits } : {}),
  };
};

/** `--policy burst=20/10` (sliding) or `--policy hourly=1000/3600:fixed`. */
function policies(): RatePolicy[] {
  return (o.policy ?? []).map((p) => {
    const m = /^([a-z][a-z0-9_-]*)=(\d+)\/(\d+)(:fixed|:sliding)?$/.exec(p);
    if (!m)
      throw new CliError(
        `--policy must look like burst=20/10 or burst=20/10:fixed (name=limit/window seconds), got "${p}"`,
      );
    const algorithm = m[4] ? { algorithm: m[4].slice(1) as 'fixed' | 'sliding' } : {};
    return { name: m[1]!, limit: Number(m[2]), window_s: Number(m[3]), ...algorithm };
  });
}

function limitsBody() {
  const groups: Record<string, Record<string, number>> = {};
  for (const g of o.group ?? []) {
    const m = /^([a-z]+):(daily|monthly)=(\d+)$/.exec(g);
    if (!m) throw new CliError(`--group must look like sessions:daily=100, got "${g}"`);
    const [, group = '', period = '', amount] = m;
    groups[group] = { ...groups[group], [period]: Number(amount) };
  }
  const quota = {
    daily: num('daily', o.daily),
    monthly: num('monthly', o.monthly),
    ...(Object.keys(groups).length ? { groups } : {}),
  };
  if (o.limiter && o.limiter !== 'leased' && o.limiter !== 'exact') {
    throw new CliError(`--limiter must be leased or exact, got "${o.limiter}"`);
  }
  const limiter = o.limiter as 'leased' | 'exact' | undefined;
  return { policies: policies(), quota, ...(limiter ? { limiter } : {}) };
}

/** A token's own limits from --policy, --daily and --monthly; none given means none. */
function tokenLimits() {
  const given = (o.policy ?? []).length > 0 || o.daily !== undefined || o.monthly !== undefined;
  if (!given) return undefined;
  return {
    policies: policies(),
    quota: { daily: num('daily', o.daily), monthly: num('monthly', o.monthly) },
  };
}

/**
 * Checks a platform key with the platform (POST /admin/keys/check), as the console's
 * Create does: a key it did not accept stops the command unless --force, which goes on
 * with a warning. The key is never printed.
 */
async function checkKey(api: Client, key: string): Promise<void> {
  const check = await api.data(api.admin.keys.check.$post({ json: { platform_key: key } }));
  if (check.result === 'valid') return;
  if (!o.force) {
    throw new CliError(
      `${keyCheckText(check)} Nothing was changed. Fix the key, or set it anyway with --force.`,
    );
  }
  console.error(`warning: ${keyCheckText(check)} Set anyway (--force).`);
}

async function run(api: Client): Promise<{ data: unknown; say: string }> {
  // The routes the commands name: a tenant, a token of it, a plan (path values encoded).
  const tenant = api.admin.tenants[':id'];
  const token = tenant.tokens[':token_id'];
  const plan = api.admin.plans[':name'];
  const at = (id: string | undefined) => ({ param: segments({ id: need(id, 'TENANT_ID') }) });
  const atToken = (id: string | undefined, tokenId: string | undefined) => ({
    param: segments({ id: need(id, 'TENANT_ID'), token_id: need(tokenId, 'TOKEN_ID') }),
  });
  const named = (name: string | undefined) => ({ param: segments({ name: need(name, 'PLAN') }) });
  switch (`${command} ${sub}`.trim()) {
    case 'tenant create': {
      const body = {
        name: need(o.name, '--name'),
        platform_key: need(
          o['platform-key'] ?? process.env.PLATFORM_KEY,
          '--platform-key or PLATFORM_KEY',
        ),
        cors_origins: o['cors-origin'] ?? [],
        token: { ...tokenSpec(), name: o['token-name'] ?? 'default' },
        ...(o.plan ? { plan: o.plan } : {}),
      };
      await checkKey(api, body.platform_key);
      const data = await api.data(api.admin.tenants.$post({ json: body }));
      return {
        data,
        say: `Tenant ${data.tenant_id} created.\nToken ${data.token_id} (${data.scopes.join(' ')}), shown only now:\n\n  ${data.token}\n`,
      };
    }
    case 'tenant list': {
      const query = { page_size: o['page-size'] ?? '20', cursor: o.cursor };
      const data = await api.data(api.admin.tenants.$get({ query }));
      const rows = data.tenants
        .map((x) => `${x.id}  ${x.status.padEnd(8)}  ${(x.plan ?? '-').padEnd(12)}  ${x.name}`)
        .join('\n');
      return {
        data,
        say: `${rows || '(no tenants)'}${data.cursor ? `\nmore: --cursor ${data.cursor}` : ''}`,
      };
    }
    case 'tenant get':
      return show(await api.data(tenant.$get(at(args[0]))));
    case 'tenant update': {
      const origins = o['no-cors-origins'] ? [] : o['cors-origin'];
      const key = o['new-platform-key']
        ? need(process.env.PLATFORM_KEY, 'PLATFORM_KEY')
        : o['platform-key'];
      const body = {
        ...(o.name ? { name: o.name } : {}),
        ...(key ? { platform_key: key } : {}),
        ...(origins ? { cors_origins: origins } : {}),
        ...(o['no-plan'] ? { plan: null } : o.plan ? { plan: o.plan } : {}),
      };
      if (key) await checkKey(api, key);
      return show(await api.data(tenant.$patch({ ...at(args[0]), json: body })));
    }
    case 'tenant disable':
    case 'tenant enable':
      return show(await api.data(tenant[sub as 'disable' | 'enable'].$post(at(args[0]))));
    case 'tenant delete':
      return show(await api.data(tenant.$delete(at(args[0]))));
    case 'token issue': {
      const data = await api.data(tenant.tokens.$post({ ...at(args[0]), json: tokenSpec() }));
      return {
        data,
        say: `Token ${data.id} (${data.scopes.join(' ')})${data.expires_at ? `, expires ${data.expires_at}` : ''}, shown only now:\n\n  ${data.token}\n`,
      };
    }
    case 'token list': {
      const data = await api.data(tenant.tokens.$get(at(args[0])));
      const now = Date.now();
      const rows = data.tokens.map((x) => tokenRow(x, now));
      return { data, say: rows.join('\n') || '(no tokens)' };
    }
    case 'token limits': {
      const which = atToken(args[0], args[1]);
      if (o.reset) return show(await api.data(token.limits.$delete(which)));
      const limits = tokenLimits();
      if (!limits)
        throw new CliError('Give --policy, --daily or --monthly (or --reset to remove them).');
      return show(await api.data(token.limits.$put({ ...which, json: limits })));
    }
    case 'token rotate': {
      const body = {
        ...(o.overlap ? { overlap_s: num('overlap', o.overlap) } : {}),
        ...(o['old-valid-until'] ? { old_valid_until: o['old-valid-until'] } : {}),
      };
      const data = await api.data(token.rotate.$post({ ...atToken(args[0], args[1]), json: body }));
      return {
        data,
        say: `New token ${data.id}, shown only now:\n\n  ${data.token}\n\nOld token ${data.old_token.id} works until ${data.old_token.expires_at}.`,
      };
    }
    case 'token revoke': {
      // With --with-successors, every token rotated from it goes too (docs/OPERATING.md).
      const query = { with_successors: o['with-successors'] ? ('true' as const) : undefined };
      return show(await api.data(token.$delete({ ...atToken(args[0], args[1]), query })));
    }
    case 'limits set':
      return show(await api.data(tenant.limits.$put({ ...at(args[0]), json: limitsBody() })));
    case 'plan list': {
      const data = await api.data(api.admin.plans.$get());
      const rows = data.plans.map(
        (x) =>
          `${x.name.padEnd(24)} ${String(x.tenants).padStart(6)} ${x.tenants === 1 ? 'tenant ' : 'tenants'}${x.pending ? ` (${x.pending} pending)` : ''}  ` +
          `updated ${x.updated_at} by ${x.updated_by}`,
      );
      return { data, say: rows.join('\n') || '(no plans)' };
    }
    case 'plan get':
      return show(await api.data(plan.$get(named(args[0]))));
    case 'plan set': {
      const data = await api.data(plan.$put({ ...named(args[0]), json: limitsBody() }));
      const pending = data.pending ? `; ${data.pending} not reached yet, retried` : '';
      return {
        data,
        say: `Plan ${data.name} set (version ${data.version}): ${data.tenants} ${data.tenants === 1 ? 'tenant' : 'tenants'} on it${pending}.`,
      };
    }
    case 'plan remove':
      return show(await api.data(plan.$delete(named(args[0]))));
    case 'limits reset':
      return show(await api.data(tenant.limits.$delete(at(args[0]))));
    case 'cache purge':
      return show(await api.data(tenant.cache.purge.$post(at(args[0]))));
    case 'operations list': {
      const data = await api.data(api.admin.operations.$get());
      const rows = data.operations.map(
        (x) =>
          `${x.id.padEnd(28)} ${`${x.method} ${x.path}`.padEnd(60)} ${x.scope.padEnd(18)} cost ${x.cost}` +
          `${x.cache ? `  cached ${x.cache.ttl_s} s` : ''}${x.declared ? '  (declared)' : ''}`,
      );
      return { data, say: rows.join('\n') };
    }
    case 'operations import': {
      const file = need(args[0], 'an OpenAPI file: operations import OPENAPI.json');
      let doc: unknown;
      try {
        doc = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new CliError(`Cannot read ${file} as JSON: ${(err as Error).message}`);
      }
      // What the gateway serves now, built-in and declared, is left out.
      const data = await api.data(api.admin.operations.$get());
      let imported: ReturnType<typeof importOperations>;
      try {
        imported = importOperations(doc, data.operations);
      } catch (err) {
        throw new CliError(`${file}: ${(err as Error).message}`);
      }
      // The gateway's own parser: what it would refuse is left out, with its reason.
      const checked = await api.data(
        api.admin.operations.check.$post({ json: imported.operations }),
      );
      for (const problem of checked.problems) {
        const id = problem.operation;
        if (id && id in imported.operations) {
          const { method, path } = imported.operations[id] as { method: string; path: string };
          imported.skipped.push(`${method} ${path}: ${problem.field}: ${problem.message}`);
          delete imported.operations[id];
        }
      }
      const value = JSON.stringify(imported.operations);
      for (const line of [...imported.skipped.map((x) => `skipped ${x}`), ...imported.notes]) {
        console.error(printable(line));
      }
      // What each operation kept is called here, and the scope a token needs to call it.
      for (const [id, line] of Object.entries(imported.scopes)) {
        if (id in imported.operations) console.error(printable(line));
      }
      const count = Object.keys(imported.operations).length;
      console.error(
        `${count} new operation${count === 1 ? '' : 's'}; the value is ${value.length} bytes ` +
          '(Workers takes 5 KB per variable). Review it, then set PLATFORM_OPERATIONS to it.',
      );
      return { data: imported.operations, say: JSON.stringify(imported.operations, null, 2) };
    }
    case 'usage export':
      return exportStatus(api, need(args[0] ?? o.tenant, 'TENANT_ID'), {
        from: o.from,
        to: o.to,
        archive: o.archive,
      });
    case 'usage replay':
      return replay(
        api,
        need(o.tenant ?? args[0], '--tenant'),
        { from: need(o.from, '--from'), to: need(o.to, '--to') },
        (line) => console.error(line),
      );
    case 'portal link': {
      const expires = o['expires-in'] ? { expires_in_s: num('expires-in', o['expires-in']) } : {};
      const json = { ...expires, ...(o.manage ? { manage: true } : {}) };
      const data = await api.data(tenant['portal-links'].$post({ ...at(args[0]), json }));
      const what = o.manage ? 'reads, approves apps, manages keys' : 'read-only';
      return {
        data,
        say: `Portal link (${what}, until ${data.expires_at}; revoke early with token revoke ... ${data.token_id}), shown only now:\n\n  ${data.url}\n`,
      };
    }
    case 'partner access': {
      const dynamic = o['dynamic-clients'];
      if (dynamic !== undefined && dynamic !== 'on' && dynamic !== 'off') {
        throw new CliError('--dynamic-clients is on or off');
      }
      const json = {
        ...(o.scopes ? { grantable_scopes: o.scopes.split(',').map((x) => x.trim()) } : {}),
        ...(dynamic ? { dynamic_clients: dynamic === 'on' } : {}),
        ...(o['max-keys'] ? { max_keys: num('max-keys', o['max-keys']) } : {}),
      };
      if (json.grantable_scopes) warnOnApiKeyScopes(json.grantable_scopes);
      const access = tenant['partner-access'];
      return show(
        await api.data(
          Object.keys(json).length > 0
            ? access.$put({ ...at(args[0]), json })
            : access.$get(at(args[0])),
        ),
      );
    }
    case 'oauth clients': {
      const data = await api.data(api.admin.oauth.clients.$get({ query: { cursor: o.cursor } }));
      const rows = data.clients.map(
        (x) =>
          `${x.client_id}  ${x.kind.padEnd(8)}  ${x.client_name}  ${x.redirect_uris.join(' ')}`,
      );
      return {
        data,
        say: `${rows.join('\n') || '(no clients)'}${data.cursor ? `\nmore: --cursor ${data.cursor}` : ''}`,
      };
    }
    case 'oauth register': {
      const json = { client_name: need(o.name, '--name'), redirect_uris: o.redirect ?? [] };
      return show(await api.data(api.admin.oauth.clients.$post({ json })));
    }
    case 'oauth remove': {
      const param = segments({ client_id: need(args[0], 'CLIENT_ID') });
      return show(await api.data(api.admin.oauth.clients[':client_id'].$delete({ param })));
    }
    default:
      break;
  }
  switch (command) {
    case 'usage': {
      // `usage TENANT_ID`: the tenant id stands where other commands have a sub-command.
      if (o.history) return usageHistory(api, need(sub, 'TENANT_ID'), o.history);
      const data = await api.data(tenant.usage.$get(at(sub)));
      const rows = data.meters.map(
        (m) =>
          `${m.name.padEnd(16)} ${String(m.used).padStart(8)} used of ${m.limit}, ${m.reserved ?? 0} reserved, ${m.remaining} left, resets in ${humanDuration(m.reset_s)}`,
      );
      return { data, say: rows.join('\n') };
    }
    case 'audit': {
      const query = {
        page_num: o.page ?? '1',
        page_size: o['page-size'] ?? '20',
        tenant_id: o.tenant,
        actor: o.actor,
        action: o.action,
        since: o.since,
        until: o.until,
      };
      const data = await api.data(api.admin.audit.$get({ query }));
      // Who, and from where (IP, data center), then what; the action column as wide as
      // the page's longest (portal_link.created), so the tenant ids line up.
      const actionWidth = Math.max(16, ...data.data.map((e) => e.action.length));
      const rows = data.data.map(
        (e) =>
          `${e.at}  ${String(e.actor ?? '-').padEnd(24)} ${`${e.ip ?? '-'}/${e.colo ?? '-'}`.padEnd(20)} ` +
          `${e.action.padEnd(actionWidth)} ${e.tenant_id ?? '-'} ${e.token_id ?? ''}`,
      );
      return {
        data,
        say: `${rows.join('\n') || '(empty)'}\npage ${data.page_num} of ${data.total_page} (${data.total} entries)`,
      };
    }
    case 'reencrypt':
      return show(await api.data(api.admin.maintenance.reencrypt.$post()));
    default:
      throw new CliError(
        `Unknown command "${[command, sub].join(' ').trim()}". Run "npm run admin -- --help".`,
      );
  }
}

/** `usage TENANT --history 7d`: a table of the last days with a small bar chart. */
async function usageHistory(api: Client, tenantId: string, span: string) {
  // The gateway refuses a range past its retention (USAGE_RETENTION_DAYS) and says so.
  const days = Number(/^(\d{1,4})d$/.exec(span)?.[1]);
  if (!(days >= 1)) throw new CliError(`--history must look like 7d (days), got "${span}"`);
  const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const from = new Date(today - (days - 1) * 86_400_000).toISOString();
  const query = { from, granularity: 'day' } as const;
  const data = await api.data(
    api.admin.tenants[':id'].analytics.$get({ param: segments({ id: tenantId }), query }),
  );
  return { data, say: historyTable(data.series, today, days) };
}

function show(data: unknown) {
  return { data, say: asFields(data) };
}

if (o.help || !command) {
  console.log(HELP);
  process.exit(command || o.help ? 0 : 2);
}
try {
  const local = localGatewayUrl();
  const url = o.url || process.env.GATEWAY_URL || local.url;
  const from = o.url ? '--url' : process.env.GATEWAY_URL ? 'GATEWAY_URL' : local.from;
  const api = client(url, adminToken(url), from);
  if (command === 'config') {
    const options = { select: o.select, out: o.out, sealed: o.sealed };
    process.exit(await runConfig(api, sub, args, options));
  }
  const { data, say } = await run(api);
  console.log(o.json ? JSON.stringify(data, null, 2) : printable(say));
} catch (err) {
  if (!(err instanceof CliError)) throw err;
  console.error(`error: ${printable(err.message)}`);
  // The config commands keep 1 for "diff found differences".
  process.exit(err instanceof ConfigRefused || command === 'config' ? 2 : 1);
}
