/**
 * Operator API: the fleet as a file (docs/CONFIG-AS-CODE.md; the definitions:
 * config.contract.ts). A plan reads the fleet once (config/read.ts), checks the file whole
 * (config/desired.ts) and lists the changes (config/plan.ts) under a hash; an apply,
 * naming that hash in If-Match, reads again, refuses a fleet that changed, and applies
 * (config/apply.ts) while holding the ConfigBook's apply lock.
 */
import type { Context } from 'hono';
import * as z from 'zod';
import { GatewayError } from '../errors';
import { sha256Hex } from '../hash';
import { configBook } from '../objects/config/config-book';
import type { RestoredToken } from '../objects/tenant/tokens/token-changes';
import { catalogOf } from '../operations/catalog';
import { isSealed, keyRing, open } from '../tenants/crypto';
import { grantScopes } from '../tenants/scopes';
import type { HonoEnv } from '../types/context';
import { adminStores, audit, auditContext, guardFor } from './common';
import { applySteps } from './config/apply';
import { type ArchiveBody, openArchive, sealArchive, tagChecks } from './config/archive';
import { checkFile } from './config/desired';
import { canonical, fileOf, type LiveFleet } from './config/model';
import { type KeyGiven, planChanges, type Step } from './config/plan';
import { readFleet } from './config/read';
import * as contract from './config.contract';
import { fleetFileSchema, type TenantEntry } from './config-file';
import { type AdminApp, handle } from './handle';
import { MAX_TOKEN_LIFETIME_S } from './tokens.contract';
import { webhookUrlProblem } from './webhook-url';

/** How long an apply holds the lock at most (one that died leaves it this long). */
const APPLY_LOCK_MS = 10 * 60_000;
/** Applies the console's history shows. */
const APPLIES_SHOWN = 20;

type C = Context<HonoEnv>;
type Body = z.output<typeof contract.configBody>;

export function configRoutes(app: AdminApp): void {
  handle(app, contract.configSchema, async () => {
    const schema: Record<string, unknown> = z.toJSONSchema(fleetFileSchema, {
      io: 'input',
      unrepresentable: 'any',
    });
    return schema;
  });

  handle(app, contract.dumpConfig, async (c) => {
    const tag = c.req.valid('query').tag ?? null;
    return fileOf(scoped(await readFleet(c, selector(tag, new Set())), tag));
  });

  handle(app, contract.planConfig, async (c) => {
    const planned = await planOf(c, c.req.valid('json'));
    c.header('ETag', `"${planned.hash}"`);
    return {
      hash: planned.hash,
      changes: planned.steps.map((s) => s.change),
      counts: countsOf(planned.steps),
      warnings: planned.warnings,
    };
  });

  handle(app, contract.applyConfig, async (c) => {
    const asked = c.req.header('if-match')?.trim().replace(/^"|"$/g, '');
    if (!asked) throw new GatewayError('CONFIG_PLAN_REQUIRED');
    const book = configBook(c.env);
    if (!(await book.lock(asked, Date.now(), Date.now() + APPLY_LOCK_MS))) {
      throw new GatewayError('CONFLICT', {
        message: 'Another apply is running: wait for it, then plan again',
      });
    }
    try {
      const planned = await planOf(c, c.req.valid('json'));
      if (planned.hash !== asked) throw new GatewayError('CONFIG_PLAN_STALE');
      const stores = await adminStores(c);
      const record = (applied: number) =>
        planned.steps.length === 0
          ? undefined
          : book.recordApply({
              hash: planned.hash,
              at: new Date().toISOString(),
              actor: auditContext(c).actor,
              request_id: c.get('requestId'),
              changes: planned.steps.length,
              applied,
              complete: applied === planned.steps.length,
            });
      try {
        const done = await applySteps(c, stores, planned, planNamesOf(planned.live));
        await record(done.applied.length);
        return { hash: planned.hash, ...done };
      } catch (err) {
        const applied =
          err instanceof GatewayError ? (err.details.applied as unknown[] | undefined) : undefined;
        await record(applied?.length ?? 0);
        throw err;
      }
    } finally {
      await book.unlock(asked);
    }
  });

  handle(app, contract.backupConfig, async (c, op) => {
    const { archive_key, select } = c.req.valid('json');
    const tag = select ?? null;
    const live = scoped(await readFleet(c, selector(tag, new Set())), tag);
    const body = await archiveOf(c, live);
    const archive = await sealArchive(body, archive_key);
    const tokens = Object.values(body.tokens).reduce((n, t) => n + Object.keys(t).length, 0);
    const tenants = live.tenants.length;
    await audit(c, op.audit, { detail: { tenants, tokens, ...(tag ? { select: tag } : {}) } });
    return { archive, tenants, tokens, made_at: body.made_at };
  });

  handle(app, contract.configApplies, async (c) => ({
    applies: await configBook(c.env).applies(APPLIES_SHOWN),
  }));
}

/** A selection: the tenants carrying the tag, or that the file names with it. */
function selector(tag: string | null, named: Set<string>) {
  return (ref: string, tags: string[]) => tag === null || tags.includes(tag) || named.has(ref);
}

/** The plans a selection reaches (the reader reads them all: tenants name them). */
function scoped(live: LiveFleet, tag: string | null): LiveFleet {
  if (tag === null) return live;
  return { ...live, plans: live.plans.filter((p) => p.tags.includes(tag)) };
}

/** The refs of the file's tenants carrying the tag: read whole even where the fleet lacks it. */
function namedWith(raw: unknown, tag: string | null): Set<string> {
  const named = new Set<string>();
  const tenants = (raw as { tenants?: unknown } | null)?.tenants;
  if (tag === null || !Array.isArray(tenants)) return named;
  for (const t of tenants as { ref?: unknown; tags?: unknown }[]) {
    if (typeof t?.ref === 'string' && Array.isArray(t.tags) && t.tags.includes(tag))
      named.add(t.ref);
  }
  return named;
}

function planNamesOf(live: LiveFleet): Map<string, string> {
  return new Map(live.plans.map((p) => [p.ref, p.name]));
}

function countsOf(steps: Step[]) {
  const counts = { rename: 0, create: 0, update: 0, delete: 0 };
  for (const s of steps) counts[s.change.op]++;
  return counts;
}

interface Planned {
  hash: string;
  steps: Step[];
  warnings: string[];
  live: LiveFleet;
  archive: ArchiveBody | null;
  platformKey(tenant: TenantEntry): string | null;
}

/** The plan of a request's file (or backup) against the fleet as read now. */
async function planOf(c: C, body: Body): Promise<Planned> {
  const settings = c.get('settings');
  const archive = body.archive ? await openArchive(body.archive, body.archive_key ?? '') : null;
  const raw: unknown = archive ? archive.file : body.config;
  const select = body.select ?? null;
  const live = await readFleet(c, selector(select, namedWith(raw, select)));
  const platformKey = (t: TenantEntry): string | null => {
    const saved = archive?.tenants[t.ref]?.platform_key;
    if (saved) return saved;
    const name = t.platform_key_ref.startsWith('env:') ? t.platform_key_ref.slice(4) : null;
    return name === null ? null : (body.platform_keys[name] ?? null);
  };
  const groups = catalogOf(settings).groups;
  const now = Date.now();
  const checked = checkFile(raw, {
    live,
    mode: body.mode,
    select,
    now,
    defaults: settings.DEFAULT_LIMITS,
    grant: (scopes) => grantScopes(scopes, groups),
    webhookProblem: (url) => webhookUrlProblem(url, settings.WEBHOOK_LOCAL_TARGETS),
    hasKey: (t) => platformKey(t) !== null,
    maxTokenLifetimeMs: MAX_TOKEN_LIFETIME_S * 1000,
  });
  if (!checked.ok) {
    const { problems } = checked;
    throw new GatewayError('VALIDATION_FAILED', {
      message: `The file was refused whole, nothing was changed: ${problems.length} problem(s): ${problems
        .slice(0, 3)
        .map((p) => p.message)
        .join('; ')}${problems.length > 3 ? '; …' : ''}`,
      details: { errors: problems },
    });
  }
  const fingerprints: Record<string, string> = {};
  for (const t of checked.desired.file.tenants) {
    const key = platformKey(t);
    if (key) fingerprints[t.ref] = await sha256Hex(key);
  }
  const warnings: string[] = [];
  const keyOf = (t: TenantEntry): KeyGiven => {
    const fingerprint = fingerprints[t.ref];
    if (fingerprint) return { fingerprint };
    if (t.platform_key_ref !== 'keep') {
      warnings.push(
        `tenant ${t.ref}: ${t.platform_key_ref} was not given, so its platform key was not compared`,
      );
    }
    return t.platform_key_ref === 'keep' ? 'keep' : 'missing';
  };
  const checks = archive ? await tagChecks(await keyRing(settings.KEY_ENCRYPTION_KEY)) : {};
  const tokenSource = (tenantRef: string, tokenRef: string) => {
    const saved = archive?.tokens[tenantRef]?.[tokenRef];
    if (!archive || !saved) return null;
    const kid = saved.record.tag_kid;
    const sameKey = !kid || (checks[kid] !== undefined && checks[kid] === archive.tag_checks[kid]);
    if (sameKey) return { source: 'restored' as const, note: null };
    const note = `this gateway has not the key that tagged it (KEY_ENCRYPTION_KEY entry ${kid}): re-issued with a new secret`;
    return { source: 'reissued' as const, note };
  };
  const steps = planChanges(live, checked.desired, { mode: body.mode, select, keyOf, tokenSource });
  const hash = await sha256Hex(
    canonical({
      live,
      file: checked.desired.file,
      select,
      mode: body.mode,
      fingerprints,
      archive: archive?.made_at ?? null,
    }),
  );
  return { hash, steps, warnings, live, archive, platformKey };
}

/** What a sealed backup holds of the fleet read: keys, webhook secrets, token records. */
async function archiveOf(c: C, live: LiveFleet): Promise<ArchiveBody> {
  const stores = await adminStores(c);
  const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
  const now = Date.now();
  const tenants: ArchiveBody['tenants'] = {};
  const tokens: ArchiveBody['tokens'] = {};
  for (const t of live.tenants) {
    const guard = guardFor(c.env, t.id);
    const [opened, alerts, heads] = await Promise.all([
      stores.tenants.get(t.id),
      guard.alerts().stored(),
      guard.tokens().heads(t.id, now),
    ]);
    if (!opened) continue;
    const secret = alerts
      ? isSealed(alerts.secret)
        ? await open(ring, alerts.secret, t.id)
        : alerts.secret
      : null;
    tenants[t.ref] = { id: t.id, platform_key: opened.platform_key, webhook_secret: secret };
    const byId = new Map(heads.map((h) => [h.record.id, h]));
    const kept: Record<string, RestoredToken> = {};
    for (const token of t.tokens) {
      const head = byId.get(token.id);
      if (head) kept[token.ref] = head;
    }
    tokens[t.ref] = kept;
  }
  return {
    format: 'apgw-fleet-backup',
    made_at: new Date(now).toISOString(),
    file: fileOf(live),
    tenants,
    tokens,
    tag_checks: await tagChecks(ring),
  };
}
