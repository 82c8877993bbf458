/**
 * Applies a fleet file's plan (plan.ts), one change at a time in the plan's order, each
 * audited as one operator action (`config.<kind>.<op>`) naming the plan's hash. The ref
 * of an object to create is kept in the ConfigBook before the object is made, under the
 * id it is made with, so a run cut short and run again finds it by its ref and goes on
 * (idempotent by ref). A change that fails stops the run: the error lists what was
 * applied, what was not, and the secrets made so far (shown once).
 */
import type { Context } from 'hono';
import { GatewayError } from '../../errors';
import { isolateAdmission } from '../../limits/admission';
import { log } from '../../log';
import { configBook, type RefRow } from '../../objects/config/config-book';
import { planBook } from '../../objects/plans/plan-book';
import { keyRing, seal } from '../../tenants/crypto';
import type { Stores } from '../../tenants/stores';
import { newTenantId, type TenantPatch } from '../../tenants/tenant-store';
import { randomBase62 } from '../../tenants/token';
import type { HonoEnv } from '../../types/context';
import type { ConfigChange, ConfigSecret } from '../../types/wire';
import { audit, auditContext, changeGuard, guardFor, welcomeTenant } from '../common';
import type { TenantEntry } from '../config-file';
import { joinPlan } from '../plans';
import { changeRecord, removeTenant } from '../tenants';
import type { ArchiveBody } from './archive';
import type { Step } from './plan';

/** Rollout calls a plan's new limits make before the apply goes on (the PlanBook does the rest). */
const ROLLOUT_ROUNDS = 20;

export interface ApplyInput {
  hash: string;
  steps: Step[];
  /** A tenant's platform key in this request, by its ref (an env variable's value, or a backup's). */
  platformKey(tenant: TenantEntry): string | null;
  archive: ArchiveBody | null;
}

type C = Context<HonoEnv>;

/** What a run made, as it goes: new secrets, and the ids of what it created. */
interface Run {
  c: C;
  stores: Stores;
  input: ApplyInput;
  secrets: ConfigSecret[];
  tenantIds: Map<string, string>;
  planNames: Map<string, string>;
}

export async function applySteps(
  c: C,
  stores: Stores,
  input: ApplyInput,
  livePlans: Map<string, string>,
) {
  const run: Run = {
    c,
    stores,
    input,
    secrets: [],
    tenantIds: new Map(),
    planNames: new Map(livePlans),
  };
  const applied: ConfigChange[] = [];
  for (const [i, step] of input.steps.entries()) {
    try {
      const ids = await applyStep(run, step);
      await audit(c, `config.${step.kind}.${step.change.op}`, {
        tenant_id: ids.tenantId,
        token_id: ids.tokenId,
        detail: {
          plan: input.hash,
          ref: step.change.ref,
          ...(step.change.tenant_ref ? { tenant_ref: step.change.tenant_ref } : {}),
          fields: step.change.fields.map((f) => f.field),
        },
      });
      applied.push({ ...step.change, id: ids.id });
    } catch (err) {
      const cause = err instanceof GatewayError ? err : null;
      // What failed inside is the log's (by name), never the answer's.
      if (!cause) {
        log.error('config.apply_failed', {
          error: err instanceof Error ? err.name : typeof err,
          change: `${step.change.op} ${step.kind} ${step.change.ref}`,
          plan: input.hash,
        });
      }
      throw new GatewayError('CONFIG_APPLY_STOPPED', {
        message:
          `The apply stopped at change ${i + 1} of ${input.steps.length} (${step.change.op} ${step.kind} ` +
          `${step.change.ref}): ${cause?.message ?? 'an internal error'}. Run it again to finish.`,
        details: {
          hash: input.hash,
          applied,
          failed: {
            change: step.change,
            code: cause?.code ?? 50000,
            msg: cause?.message ?? 'Internal gateway error',
          },
          not_applied: input.steps.slice(i).map((s) => s.change),
          secrets: run.secrets,
        },
      });
    }
  }
  return { applied, secrets: run.secrets };
}

interface Touched {
  id: string | null;
  tenantId: string | null;
  tokenId: string | null;
}

function applyStep(run: Run, step: Step): Promise<Touched> {
  if (step.kind === 'plan') return applyPlan(run, step);
  if (step.kind === 'tenant') return applyTenant(run, step);
  return applyToken(run, step);
}

// ---- Plans ------------------------------------------------------------------------------

async function applyPlan(run: Run, step: Extract<Step, { kind: 'plan' }>): Promise<Touched> {
  const { c } = run;
  const book = planBook(c.env);
  const actor = auditContext(c).actor;
  const { op } = step.change;
  const touched = (name: string) => ({ id: name, tenantId: null, tokenId: null });
  if (op === 'delete' && step.live) {
    const outcome = await book.remove(step.live.name);
    if (outcome.kind === 'in_use') {
      throw new GatewayError('CONFLICT', {
        message: `Plan ${step.live.name} still has ${outcome.tenants} tenant(s)`,
      });
    }
    await configBook(c.env).drop('plan', [step.live.name]);
    return touched(step.live.name);
  }
  const want = step.desired;
  if (!want) throw new GatewayError('INTERNAL');
  if (op === 'rename' && step.live) {
    // A plan's name is its key in the PlanBook: the new name is made with the old limits,
    // its tenants moved to it, the old one removed. Run again, it goes on where it stopped.
    const old = step.live.name;
    if (!(await book.get(want.name)))
      await book.put(want.name, step.live.limits, actor, Date.now());
    for (const tenantId of step.live.members) await joinPlan(c, tenantId, want.name);
    if (await book.get(old)) {
      const outcome = await book.remove(old);
      if (outcome.kind === 'in_use') {
        throw new GatewayError('CONFLICT', {
          message: `Plan ${old} still has tenants: run the apply again`,
        });
      }
    }
    await keepRef(run, {
      kind: 'plan',
      scope: '',
      ref: want.ref,
      target: want.name,
      tags: step.live.tags,
      key_ref: null,
    });
    run.planNames.set(want.ref, want.name);
    return touched(want.name);
  }
  await keepRef(run, {
    kind: 'plan',
    scope: '',
    ref: want.ref,
    target: want.name,
    tags: want.tags,
    key_ref: null,
  });
  run.planNames.set(want.ref, want.name);
  const limitsChanged = op === 'create' || step.change.fields.some((f) => f.field === 'limits');
  if (limitsChanged) {
    const first = await book.put(want.name, want.limits, actor, Date.now());
    for (const t of first.rollout.applied) isolateAdmission.forget(t);
    let rollout = first.rollout;
    for (let round = 1; rollout.due > 0 && round < ROLLOUT_ROUNDS; round++) {
      rollout = await book.rollout();
      for (const t of rollout.applied) isolateAdmission.forget(t);
    }
  }
  return touched(want.name);
}

// ---- Tenants ----------------------------------------------------------------------------

async function applyTenant(run: Run, step: Extract<Step, { kind: 'tenant' }>): Promise<Touched> {
  const { c, stores } = run;
  const { op } = step.change;
  if (op === 'delete' && step.live) {
    const stored = await stores.tenants.getStored(step.live.id);
    if (stored) await removeTenant(c, stores, stored);
    await configBook(c.env).drop('tenant', [step.live.id]);
    return { id: step.live.id, tenantId: step.live.id, tokenId: null };
  }
  const want = step.desired;
  if (!want) throw new GatewayError('INTERNAL');
  if (op === 'create') return createTenant(run, want);
  const id = step.live?.id;
  if (!id) throw new GatewayError('INTERNAL');
  run.tenantIds.set(want.ref, id);
  if (op === 'rename') {
    await changed(run, id, { name: want.name });
    return { id, tenantId: id, tokenId: null };
  }
  const fields = new Set(step.change.fields.map((f) => f.field));
  const patch: TenantPatch = {};
  if (fields.has('status')) patch.status = want.status;
  if (fields.has('cors_origins')) patch.cors_origins = want.cors_origins;
  if (fields.has('platform_key')) {
    const key = run.input.platformKey(want);
    if (key) patch.platform_key = key;
  }
  if (Object.keys(patch).length > 0) await changed(run, id, patch);
  if (fields.has('plan')) await joinPlan(c, id, planName(run, want.plan));
  if (fields.has('limits')) await setLimits(run, id, want);
  if (fields.has('alerts')) await setAlerts(run, id, want);
  if (fields.has('tags') || fields.has('platform_key_ref') || step.change.ref !== want.ref) {
    await keepTenantRef(run, want, id);
  }
  return { id, tenantId: id, tokenId: null };
}

async function createTenant(run: Run, want: TenantEntry): Promise<Touched> {
  const { c, stores } = run;
  const key = run.input.platformKey(want);
  if (!key) throw new GatewayError('INTERNAL');
  // Always a new id, a restore's too: the id of a tenant deleted here stays its tombstone's
  // (guard/tenant-record.ts), and restored tokens' records take the new id.
  const id = newTenantId();
  await keepTenantRef(run, want, id);
  const tenant = await stores.tenants.create({
    id,
    name: want.name,
    platformKey: key,
    corsOrigins: want.cors_origins,
  });
  await welcomeTenant(c, stores, tenant);
  run.tenantIds.set(want.ref, id);
  if (want.plan) await joinPlan(c, id, planName(run, want.plan));
  if (want.limits) await setLimits(run, id, want);
  if (want.alerts) await setAlerts(run, id, want);
  if (want.status === 'disabled') await changed(run, id, { status: 'disabled' });
  return { id, tenantId: id, tokenId: null };
}

async function changed(run: Run, id: string, patch: TenantPatch): Promise<void> {
  if (!(await changeRecord(run.c, run.stores, id, patch))) {
    throw new GatewayError('RESOURCE_NOT_FOUND', {
      message: `No tenant ${id}: it was deleted meanwhile`,
    });
  }
}

function planName(run: Run, ref: string | null): string | null {
  if (ref === null) return null;
  return run.planNames.get(ref) ?? ref;
}

async function setLimits(run: Run, id: string, want: TenantEntry): Promise<void> {
  const defaults = run.c.get('settings').DEFAULT_LIMITS;
  await changeGuard(run.c, id, (g) => g.limits().setLimits(want.limits, defaults));
}

/**
 * The webhook as the file says. Its signing secret stays while the URL does (the
 * receiver checks it); a new URL gets a new secret, shown once; a restore takes the
 * backup's.
 */
async function setAlerts(run: Run, id: string, want: TenantEntry): Promise<void> {
  const { c } = run;
  if (!want.alerts) {
    await changeGuard(c, id, (g) => g.alerts().set(null));
    return;
  }
  const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
  const restored = run.input.archive?.tenants[want.ref]?.webhook_secret ?? null;
  const current = await guardFor(c.env, id).alerts().stored();
  let sealed: string;
  if (restored) sealed = await seal(ring, restored, id);
  else if (current && current.url === want.alerts.url) sealed = current.secret;
  else {
    const secret = `whsec_${randomBase62(32)}`;
    sealed = await seal(ring, secret, id);
    run.secrets.push({ kind: 'webhook', tenant_ref: want.ref, ref: null, id, secret });
  }
  const { url, thresholds, server_error_percent } = want.alerts;
  await changeGuard(c, id, (g) =>
    g.alerts().set({
      tenantId: id,
      url,
      thresholds,
      serverErrorPercent: server_error_percent,
      secret: sealed,
    }),
  );
}

function keepTenantRef(run: Run, want: TenantEntry, id: string): Promise<void> {
  const keyRef = want.platform_key_ref === 'keep' ? null : want.platform_key_ref;
  return keepRef(run, {
    kind: 'tenant',
    scope: '',
    ref: want.ref,
    target: id,
    tags: want.tags,
    key_ref: keyRef,
  });
}

async function keepRef(run: Run, row: RefRow): Promise<void> {
  await configBook(run.c.env).put(row);
}

// ---- Tokens -----------------------------------------------------------------------------

async function applyToken(run: Run, step: Extract<Step, { kind: 'token' }>): Promise<Touched> {
  const { c } = run;
  const tenantRef = step.change.tenant_ref ?? '';
  const tenantId = step.tenantId ?? run.tenantIds.get(tenantRef);
  if (!tenantId) throw new GatewayError('INTERNAL');
  const guard = guardFor(c.env, tenantId);
  const { op } = step.change;
  if (op === 'delete' && step.live) {
    // The whole line goes: the token, and one it replaced that still works (an overlap),
    // from the line's first token; that one's row may be gone (swept 90 days after it
    // ended), and then the token itself.
    const ctx = auditContext(c);
    let line = await guard.tokens().revoke(tenantId, step.live.family_id, true, Date.now(), ctx);
    if (line.kind === 'not_found') {
      line = await guard.tokens().revoke(tenantId, step.live.id, true, Date.now(), ctx);
    }
    isolateAdmission.forget(tenantId);
    run.stores.tokens.forget(line.revoked);
    await configBook(c.env).drop('token', [step.live.family_id]);
    return { id: step.live.id, tenantId, tokenId: step.live.id };
  }
  const want = step.desired;
  if (!want) throw new GatewayError('INTERNAL');
  if (op === 'create') return createToken(run, step, tenantId);
  const live = step.live;
  if (!live) throw new GatewayError('INTERNAL');
  const fields = new Set(step.change.fields.map((f) => f.field));
  const amend = {
    ...(op === 'rename' ? { name: want.name } : {}),
    ...(fields.has('scopes') ? { scopes: want.scopes } : {}),
    ...(fields.has('expires_at') ? { expires_at: want.expires_at } : {}),
  };
  if (Object.keys(amend).length > 0) {
    const amended = await guard.tokens().amend(tenantId, live.id, amend);
    if (!amended)
      throw new GatewayError('RESOURCE_NOT_FOUND', { message: `No working token ${live.id}` });
    run.stores.tokens.forget([amended]);
  }
  if (fields.has('limits')) {
    if (
      !(await changeGuard(c, tenantId, (g) => g.tokens().setLimits(tenantId, live.id, want.limits)))
    ) {
      throw new GatewayError('RESOURCE_NOT_FOUND', { message: `No working token ${live.id}` });
    }
  }
  return { id: live.id, tenantId, tokenId: live.id };
}

async function createToken(
  run: Run,
  step: Extract<Step, { kind: 'token' }>,
  tenantId: string,
): Promise<Touched> {
  const { c, stores } = run;
  const want = step.desired;
  const tenantRef = step.change.tenant_ref ?? '';
  if (!want) throw new GatewayError('INTERNAL');
  const guard = guardFor(c.env, tenantId);
  const saved = run.input.archive?.tokens[tenantRef]?.[want.ref];
  if (step.change.source === 'restored' && saved) {
    // Its record as it was, so its secret works as before, under its tenant's id here; the
    // file's name, scopes and expiry win over the backup's.
    const record = {
      ...saved.record,
      tenant_id: tenantId,
      name: want.name,
      scopes: want.scopes,
      expires_at: want.expires_at,
    };
    await keepRef(run, {
      kind: 'token',
      scope: tenantId,
      ref: want.ref,
      target: saved.familyId,
      tags: [],
      key_ref: null,
    });
    const taken = await guard
      .tokens()
      .restore(tenantId, [{ ...saved, record, limits: want.limits }]);
    isolateAdmission.forget(tenantId);
    if (taken.length > 0) return { id: record.id, tenantId, tokenId: record.id };
    // The tenant holds that token already, revoked or removed: a new secret instead.
    step.change.source = 'reissued';
    step.change.note =
      'this tenant holds the backed-up token as ended: re-issued with a new secret';
  }
  const { token, ...minted } = await stores.tokens.mint();
  await keepRef(run, {
    kind: 'token',
    scope: tenantId,
    ref: want.ref,
    target: minted.id,
    tags: [],
    key_ref: null,
  });
  const spec = { name: want.name, scopes: want.scopes, expires_at: want.expires_at };
  await guard.tokens().issue(tenantId, minted, spec, want.limits, Date.now());
  if (want.limits) isolateAdmission.forget(tenantId);
  run.secrets.push({
    kind: 'token',
    tenant_ref: tenantRef,
    ref: want.ref,
    id: minted.id,
    secret: token,
  });
  return { id: minted.id, tenantId, tokenId: minted.id };
}
