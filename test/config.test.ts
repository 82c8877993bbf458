/**
 * The fleet as a file (docs/CONFIG-AS-CODE.md), through the operator API as the CLI and
 * the console call it: dump, plan (the diff), apply with If-Match, sealed backups. Each
 * test works on tenants carrying its own tag (`select`), so tests of this file and
 * others, which share the gateway's storage, never see each other's fleets.
 */
import { describe, expect, it } from 'vitest';
import schemaInDocs from '../docs/config.schema.json?raw';
import type { FleetFileInput } from '../src/admin/config-file';
import { ERRORS } from '../src/errors';
import type { ConfigChange } from '../src/types/wire';
import {
  ADMIN_TOKEN,
  admin,
  envelope,
  gateway,
  gatewayWith,
  platformKeys,
  testEnv,
  UPSTREAM,
} from './helpers';

const KEYS = { DEMO_KEY: platformKeys.demo, SECOND_KEY: platformKeys.demoSecond };
const unique = () => crypto.randomUUID().slice(0, 8);

interface Options {
  select?: string;
  mode?: 'sync' | 'apply';
  keys?: Record<string, string>;
}

const bodyOf = (file: unknown, o: Options = {}) =>
  JSON.stringify({
    config: file,
    platform_keys: o.keys ?? KEYS,
    ...(o.select ? { select: o.select } : {}),
    ...(o.mode ? { mode: o.mode } : {}),
  });

async function plan(file: unknown, o: Options = {}) {
  const res = await admin('/config/plan', { method: 'POST', body: bodyOf(file, o) });
  return { res, body: await envelope(res) };
}

async function apply(file: unknown, hash: string, o: Options = {}) {
  const res = await admin('/config/apply', {
    method: 'POST',
    body: bodyOf(file, o),
    headers: { 'if-match': `"${hash}"` },
  });
  return { res, body: await envelope(res) };
}

/** Plan, then apply that plan: what `config sync` does. */
async function sync(file: unknown, o: Options = {}) {
  const planned = await plan(file, o);
  expect(planned.res.status, JSON.stringify(planned.body)).toBe(200);
  const applied = await apply(file, planned.body.data.hash, o);
  expect(applied.res.status, JSON.stringify(applied.body)).toBe(200);
  return { plan: planned.body.data, applied: applied.body.data };
}

async function dump(tag: string) {
  const res = await admin(`/config?tag=${tag}`);
  expect(res.status).toBe(200);
  return (await envelope(res)).data;
}

/** A small fleet: a plan, two tenants, tokens with and without limits, an alert webhook. */
function fleet(tag: string): FleetFileInput {
  return {
    version: 1,
    plans: [
      {
        ref: `${tag}-gold`,
        name: `gold-${tag}`,
        tags: [tag],
        limits: { policies: [{ name: 'burst', limit: 500, window_s: 10 }], quota: { daily: 5000 } },
      },
    ],
    tenants: [
      {
        ref: `${tag}-acme`,
        name: 'Acme',
        tags: [tag],
        plan: `${tag}-gold`,
        platform_key_ref: 'env:DEMO_KEY',
        cors_origins: ['https://app.acme.example'],
        alerts: { url: `${UPSTREAM}/__emulator/webhooks/${tag}`, thresholds: [80, 50] },
        tokens: [
          { ref: 'ci', name: 'ci', scopes: ['read-only'] },
          {
            ref: 'backend',
            name: 'backend',
            scopes: ['full'],
            limits: {
              policies: [{ name: 'own', limit: 100, window_s: 10 }],
              quota: { daily: 1000 },
            },
          },
        ],
      },
      {
        ref: `${tag}-globex`,
        name: 'Globex',
        tags: [tag],
        platform_key_ref: 'env:SECOND_KEY',
        limits: { policies: [{ name: 'burst', limit: 50, window_s: 10 }], quota: {} },
        tokens: [
          { ref: 'main', name: 'main', scopes: ['full'], expires_at: '2030-01-01T00:00:00Z' },
        ],
      },
    ],
  };
}

const summary = (changes: ConfigChange[]) =>
  changes.map((c) => `${c.op} ${c.kind} ${c.tenant_ref ? `${c.tenant_ref}/` : ''}${c.ref}`);

describe('the fleet as a file', () => {
  it('publishes its JSON Schema', async () => {
    const res = await admin('/config/schema');
    expect(res.status).toBe(200);
    const schema = (await res.json()) as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(Object.keys(schema.properties)).toEqual(['version', 'plans', 'tenants']);
    expect(schema.required).toEqual(['version']);
    // The copy in docs is the one served (npx tsx scripts/config-schema.ts writes it).
    expect(schema).toEqual(JSON.parse(schemaInDocs));
  });

  it('round trip: sync, dump, wipe, sync, dump gives the same file, and diff is empty', async () => {
    const tag = `rt-${unique()}`;
    const first = await sync(fleet(tag), { select: tag });
    expect(summary(first.plan.changes)).toEqual([
      `create plan ${tag}-gold`,
      `create tenant ${tag}-acme`,
      `create tenant ${tag}-globex`,
      `create token ${tag}-acme/ci`,
      `create token ${tag}-acme/backend`,
      `create token ${tag}-globex/main`,
    ]);
    // Each new token's secret, once; a new webhook's signing secret too.
    expect(
      first.applied.secrets.map((s: { kind: string; ref: string | null }) => `${s.kind} ${s.ref}`),
    ).toEqual(['webhook null', 'token ci', 'token backend', 'token main']);
    const dumped = await dump(tag);
    expect(JSON.stringify(dumped)).not.toContain(platformKeys.demo);
    const again = await plan(dumped, { select: tag });
    expect(again.body.data.changes).toEqual([]);

    // Wipe the selection: an empty file synced with the tag deletes it, deletes last.
    const wiped = await sync({ version: 1 }, { select: tag });
    expect(summary(wiped.plan.changes)).toEqual([
      `delete tenant ${tag}-acme`,
      `delete tenant ${tag}-globex`,
      `delete plan ${tag}-gold`,
    ]);
    expect((await dump(tag)).tenants).toEqual([]);

    await sync(dumped, { select: tag });
    expect(await dump(tag)).toEqual(dumped);
  });

  it('a console edit shows as exactly that edit, field by field', async () => {
    const tag = `edit-${unique()}`;
    const made = await sync(fleet(tag), { select: tag });
    const acme = made.applied.applied.find((c: ConfigChange) => c.ref === `${tag}-acme`).id;
    const file = await dump(tag);
    const edited = await admin(`/tenants/${acme}`, {
      method: 'PATCH',
      body: JSON.stringify({ cors_origins: ['https://new.acme.example'] }),
    });
    expect(edited.status).toBe(200);
    const { body } = await plan(file, { select: tag });
    expect(body.data.changes).toEqual([
      {
        op: 'update',
        kind: 'tenant',
        ref: `${tag}-acme`,
        tenant_ref: null,
        id: acme,
        name: 'Acme',
        fields: [
          {
            field: 'cors_origins',
            before: ['https://new.acme.example'],
            after: ['https://app.acme.example'],
          },
        ],
        source: null,
        note: null,
      },
    ]);
  });

  it('a rename stays a rename: same ids, same tokens, no create or delete', async () => {
    const tag = `ren-${unique()}`;
    const made = await sync(fleet(tag), { select: tag });
    const ci = made.applied.secrets.find((s: { ref: string }) => s.ref === 'ci').secret as string;
    const file = await dump(tag);
    const tokenOf = (ref: string) =>
      file.tenants[0].tokens.find((t: { ref: string }) => t.ref === ref);
    file.tenants[0].name = 'Acme Renamed';
    tokenOf('ci').name = 'ci-renamed';
    file.plans[0].name = `platinum-${tag}`;
    const renamed = await sync(file, { select: tag });
    expect(summary(renamed.plan.changes)).toEqual([
      `rename plan ${tag}-gold`,
      `rename tenant ${tag}-acme`,
      `rename token ${tag}-acme/ci`,
    ]);
    expect(await dump(tag)).toEqual(file);
    // The token still works, under its new name.
    const res = await gateway('/token', { headers: { authorization: `Bearer ${ci}` } });
    expect(res.status).toBe(200);
    expect((await envelope(res)).data.token.name).toBe('ci-renamed');
    const tenantId = renamed.plan.changes[1].id;
    const shown = (await envelope(await admin(`/tenants/${tenantId}`))).data;
    expect(shown).toMatchObject({ name: 'Acme Renamed', plan: `platinum-${tag}` });
  });

  it('--select leaves other tenants untouched, even by a sync of an empty file', async () => {
    const mine = `sel-${unique()}`;
    const other = `oth-${unique()}`;
    await sync(fleet(other), { select: other });
    const before = await dump(other);
    await sync(fleet(mine), { select: mine });
    const wiped = await sync({ version: 1 }, { select: mine });
    expect(wiped.plan.changes.every((c: ConfigChange) => c.ref.startsWith(mine))).toBe(true);
    expect(await dump(other)).toEqual(before);
  });

  it('apply (not sync) creates and updates but never deletes', async () => {
    const tag = `app-${unique()}`;
    await sync(fleet(tag), { select: tag });
    const file = await dump(tag);
    file.tenants.pop();
    // Tokens are dumped by ref: backend, ci.
    file.tenants[0].tokens.shift();
    const { body } = await plan(file, { select: tag, mode: 'apply' });
    expect(body.data.changes).toEqual([]);
    const synced = await plan(file, { select: tag });
    expect(summary(synced.body.data.changes)).toEqual([
      `delete token ${tag}-acme/backend`,
      `delete tenant ${tag}-globex`,
    ]);
  });

  it('refuses an apply without If-Match (428) and a stale plan (412), changing nothing', async () => {
    const tag = `stale-${unique()}`;
    const made = await sync(fleet(tag), { select: tag });
    const globex = made.applied.applied.find((c: ConfigChange) => c.ref === `${tag}-globex`).id;
    const file = await dump(tag);
    file.tenants[0].cors_origins = ['https://planned.example'];
    const planned = await plan(file, { select: tag });

    const unnamed = await admin('/config/apply', {
      method: 'POST',
      body: bodyOf(file, { select: tag }),
    });
    expect(unnamed.status).toBe(428);
    expect((await envelope(unnamed)).code).toBe(ERRORS.CONFIG_PLAN_REQUIRED.code);

    // Someone changes the fleet in the console after the plan.
    await admin(`/tenants/${globex}`, {
      method: 'PATCH',
      body: JSON.stringify({ name: 'Globex (console)' }),
    });
    const stale = await apply(file, planned.body.data.hash, { select: tag });
    expect(stale.res.status).toBe(412);
    expect(stale.body.code).toBe(ERRORS.CONFIG_PLAN_STALE.code);
    const now = await dump(tag);
    expect(now.tenants[0].cors_origins).toEqual(['https://app.acme.example']);
    expect(now.tenants[1].name).toBe('Globex (console)');
  });

  it('refuses a bad file whole, every problem named by its path, nothing applied', async () => {
    const tag = `bad-${unique()}`;
    const file = fleet(tag) as {
      tenants: Record<string, unknown>[];
      plans: Record<string, unknown>[];
    };
    file.tenants[0] = {
      ...file.tenants[0],
      plan: 'no-such-plan',
      limits: { policies: [{ name: 'burst', limit: 50, window_s: 10 }], quota: { daily: 100 } },
      tokens: [
        { ref: 'ci', name: 'ci', scopes: ['read-only'] },
        { ref: 'ci', name: 'twice', scopes: ['nope:read'] },
        {
          ref: 'big',
          name: 'big',
          scopes: ['full'],
          limits: { policies: [{ name: 'own', limit: 60, window_s: 10 }], quota: { daily: 1000 } },
        },
      ],
    };
    file.tenants[1] = { ...file.tenants[1], ref: `${tag}-acme`, platform_key_ref: 'env:UNSET' };
    const { res, body } = await plan(file, { select: tag });
    expect(res.status).toBe(400);
    expect(body.code).toBe(ERRORS.VALIDATION_FAILED.code);
    expect(body.data.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      [
        'tenants[0].tokens[1].scopes',
        'tenants[1].ref',
        'tenants[0].tokens[1].ref',
        'tenants[0].plan',
        'tenants[1].platform_key_ref',
        'tenants[0].tokens[2].limits.quota.daily',
        'tenants[0].tokens[2].limits.policies[0].limit',
      ].sort(),
    );
    const schemaBad = await plan(
      { version: 1, tenants: [{ ref: 'x', name: '', extra: 1 }] },
      { select: tag },
    );
    expect(schemaBad.body.data.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      ['tenants[0].extra', 'tenants[0].name', 'tenants[0].platform_key_ref'].sort(),
    );
    expect((await dump(tag)).tenants).toEqual([]);
  });

  it('a half-applied sync stops with what was and was not applied; a re-run finishes', async () => {
    const tag = `half-${unique()}`;
    const file = fleet(tag);
    const planned = await plan(file, { select: tag });
    // KV refuses the second tenant's record (a KV outage, injected in the binding only).
    const failing = new Proxy(testEnv.TENANTS, {
      get(kv, name) {
        if (name !== 'put') return Reflect.get(kv, name).bind(kv);
        return (key: string, value: string, options?: KVNamespacePutOptions) => {
          if (key.startsWith('tenant:') && value.includes('"name":"Globex"')) {
            throw new Error('KV put failed (injected)');
          }
          return kv.put(key, value, options);
        };
      },
    });
    const res = await gatewayWith({ TENANTS: failing }, '/admin/config/apply', {
      method: 'POST',
      body: bodyOf(file, { select: tag }),
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'content-type': 'application/json',
        'if-match': `"${planned.body.data.hash}"`,
      },
    });
    const stopped = await envelope(res);
    expect(res.status).toBe(409);
    expect(stopped.code).toBe(ERRORS.CONFIG_APPLY_STOPPED.code);
    expect(summary(stopped.data.applied)).toEqual([
      `create plan ${tag}-gold`,
      `create tenant ${tag}-acme`,
    ]);
    expect(stopped.data.failed.change.ref).toBe(`${tag}-globex`);
    expect(summary(stopped.data.not_applied)).toEqual([
      `create tenant ${tag}-globex`,
      `create token ${tag}-acme/ci`,
      `create token ${tag}-acme/backend`,
      `create token ${tag}-globex/main`,
    ]);
    // Acme's new webhook secret was made before the stop: shown in the refusal, once.
    expect(stopped.data.secrets.map((s: { kind: string }) => s.kind)).toEqual(['webhook']);

    const rerun = await sync(file, { select: tag });
    expect(summary(rerun.plan.changes)).toEqual([
      `create tenant ${tag}-globex`,
      `create token ${tag}-acme/ci`,
      `create token ${tag}-acme/backend`,
      `create token ${tag}-globex/main`,
    ]);
    expect((await plan(await dump(tag), { select: tag })).body.data.changes).toEqual([]);
    const applies = (await envelope(await admin('/config/applies'))).data.applies;
    expect(
      applies
        .slice(0, 2)
        .map((a: { complete: boolean; applied: number }) => [a.complete, a.applied]),
    ).toEqual([
      [true, 4],
      [false, 2],
    ]);
  });
});

describe('sealed backups', () => {
  const ARCHIVE_KEY = 'correct horse battery staple';

  async function backup(tag: string, key = ARCHIVE_KEY) {
    const res = await admin('/config/backup', {
      method: 'POST',
      body: JSON.stringify({ archive_key: key, select: tag }),
    });
    const body = await envelope(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body.data as { archive: string; tenants: number; tokens: number };
  }

  const restoreBody = (archive: string, tag: string, key = ARCHIVE_KEY) =>
    JSON.stringify({ archive, archive_key: key, select: tag });

  it('restores a wiped selection: the same tokens answer again, nothing secret in the clear', async () => {
    const tag = `seal-${unique()}`;
    const made = await sync(fleet(tag), { select: tag });
    const secrets = made.applied.secrets.filter((s: { kind: string }) => s.kind === 'token');
    const sealed = await backup(tag);
    expect(sealed).toMatchObject({ tenants: 2, tokens: 3 });
    expect(sealed.archive.startsWith('apgw-backup.v1.')).toBe(true);
    for (const secret of [
      platformKeys.demo,
      platformKeys.demoSecond,
      ...secrets.map((s: { secret: string }) => s.secret),
    ]) {
      expect(sealed.archive).not.toContain(secret);
    }
    const file = await dump(tag);
    await sync({ version: 1 }, { select: tag });
    const call = (token: string) =>
      gateway('/token', { headers: { authorization: `Bearer ${token}` } });
    for (const s of secrets) expect((await call(s.secret)).status).toBe(401);

    const wrongKey = await admin('/config/plan', {
      method: 'POST',
      body: restoreBody(sealed.archive, tag, 'not the passphrase at all'),
    });
    expect(wrongKey.status).toBe(400);
    expect((await envelope(wrongKey)).data.errors[0].field).toBe('archive');

    const planned = await admin('/config/plan', {
      method: 'POST',
      body: restoreBody(sealed.archive, tag),
    });
    const { data } = await envelope(planned);
    const tokens = data.changes.filter((c: ConfigChange) => c.kind === 'token');
    expect(tokens.map((c: ConfigChange) => c.source)).toEqual(['restored', 'restored', 'restored']);
    const applied = await admin('/config/apply', {
      method: 'POST',
      body: restoreBody(sealed.archive, tag),
      headers: { 'if-match': `"${data.hash}"` },
    });
    const done = await envelope(applied);
    expect(applied.status, JSON.stringify(done)).toBe(200);
    // No new secret: the tokens and the webhook's signing secret are the backup's.
    expect(done.data.secrets).toEqual([]);
    for (const s of secrets) expect((await call(s.secret)).status).toBe(200);
    expect(await dump(tag)).toEqual(file);
  });

  it('names each token to re-issue where the gateway lacks the key that tagged it', async () => {
    const tag = `reissue-${unique()}`;
    await sync(fleet(tag), { select: tag });
    const sealed = await backup(tag);
    await sync({ version: 1 }, { select: tag });
    // Another gateway: its KEY_ENCRYPTION_KEY entry k2 is other material.
    const elsewhere = { KEY_ENCRYPTION_KEY: `k2:${'C'.repeat(43)}=` };
    const res = await gatewayWith(elsewhere, '/admin/config/plan', {
      method: 'POST',
      body: restoreBody(sealed.archive, tag),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    });
    const { data } = await envelope(res);
    expect(res.status, JSON.stringify(data)).toBe(200);
    const tokens = data.changes.filter((c: ConfigChange) => c.kind === 'token');
    expect(tokens.map((c: ConfigChange) => [c.ref, c.source])).toEqual([
      ['backend', 'reissued'],
      ['ci', 'reissued'],
      ['main', 'reissued'],
    ]);
    expect(tokens[0].note).toContain('KEY_ENCRYPTION_KEY entry k2');
  });
});

describe('changes in place', () => {
  it('narrows a token’s scopes, keeps a webhook’s secret, revokes a token left out', async () => {
    const tag = `upd-${unique()}`;
    const made = await sync(fleet(tag), { select: tag });
    const secretOf = (ref: string) =>
      made.applied.secrets.find((s: { ref: string | null }) => s.ref === ref).secret as string;
    const backend = secretOf('backend');
    const ci = secretOf('ci');
    const file = await dump(tag);
    const acme = file.tenants[0];
    const tokenOf = (ref: string) => acme.tokens.find((t: { ref: string }) => t.ref === ref);
    tokenOf('backend').scopes = ['read-only'];
    tokenOf('backend').expires_at = '2031-06-01T00:00:00.000Z';
    acme.tokens = acme.tokens.filter((t: { ref: string }) => t.ref !== 'ci');
    acme.alerts.thresholds = [90];
    file.plans[0].limits.quota.daily = 6000;
    const updated = await sync(file, { select: tag });
    expect(summary(updated.plan.changes)).toEqual([
      `update plan ${tag}-gold`,
      `update tenant ${tag}-acme`,
      `update token ${tag}-acme/backend`,
      `delete token ${tag}-acme/ci`,
    ]);
    // The same webhook URL keeps its signing secret: none is printed.
    expect(updated.applied.secrets).toEqual([]);
    expect(await dump(tag)).toEqual(file);

    const write = await gateway('/session/create', {
      method: 'POST',
      headers: { authorization: `Bearer ${backend}`, 'content-type': 'application/json' },
      body: '{"team_id":"3f6c1e2a-5b7d-4c8e-9f01-23456789abcd"}',
    });
    expect(write.status).toBe(403);
    expect((await envelope(write)).code).toBe(ERRORS.SCOPE_REQUIRED.code);
    const own = await gateway('/token', { headers: { authorization: `Bearer ${backend}` } });
    expect((await envelope(own)).data.token.expires_at).toBe('2031-06-01T00:00:00.000Z');
    const revoked = await gateway('/token', { headers: { authorization: `Bearer ${ci}` } });
    expect(revoked.status).toBe(401);
    expect((await envelope(revoked)).code).toBe(ERRORS.TOKEN_REVOKED.code);

    const audit = await envelope(await admin(`/audit?action=config.&page_size=50`));
    const mine = audit.data.data.filter(
      (e: { detail: { plan?: string } }) => e.detail.plan === updated.plan.hash,
    );
    expect(mine.map((e: { action: string }) => e.action).sort()).toEqual(
      [
        'config.plan.update',
        'config.tenant.update',
        'config.token.update',
        'config.token.delete',
      ].sort(),
    );
  });
});
