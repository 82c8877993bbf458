/**
 * A fleet file's plan: the live fleet (read.ts) against the file, as changes in the order
 * they are applied (docs/CONFIG-AS-CODE.md, "Refs, renames and deletes"): renames first, then
 * creates, then updates, deletes last. Objects are matched by `ref`; a plan the file names
 * that exists under its default ref (its name) is taken as that plan. Pure.
 *
 * With a selection (a tag), only the objects carrying it, in the file or in the fleet,
 * are compared; nothing else is touched. `apply` plans creates and updates only.
 */
import type { ConfigChange, ConfigFieldChange } from '../../types/wire';
import type { PlanEntry, TenantEntry, TokenEntryOf } from '../config-file';
import type { Desired } from './desired';
import {
  byRef,
  type LiveFleet,
  type LivePlan,
  type LiveTenant,
  type LiveToken,
  same,
} from './model';

export type Mode = 'sync' | 'apply';

/** Where a tenant's platform key comes from in this request. */
export type KeyGiven = { fingerprint: string } | 'keep' | 'missing';

/** A change, with what applying it needs: the file's entry and the live object. */
export type Step =
  | { change: ConfigChange; kind: 'plan'; desired: PlanEntry | null; live: LivePlan | null }
  | {
      change: ConfigChange;
      kind: 'tenant';
      desired: TenantEntry | null;
      live: LiveTenant | null;
      key: KeyGiven;
    }
  | {
      change: ConfigChange;
      kind: 'token';
      desired: TokenEntryOf | null;
      live: LiveToken | null;
      /** The tenant's live id; null while the tenant is created in the same apply. */
      tenantId: string | null;
    };

export interface PlanOptions {
  mode: Mode;
  select: string | null;
  /** The key this request gives for a tenant of the file. */
  keyOf(tenant: TenantEntry): KeyGiven;
  /** How a token created here is made: from a sealed backup's record, or anew. */
  tokenSource(
    tenantRef: string,
    tokenRef: string,
  ): { source: 'restored' | 'reissued'; note: string | null } | null;
}

const ORDER: ConfigChange['op'][] = ['rename', 'create', 'update', 'delete'];
const KIND_ORDER: Record<ConfigChange['op'], ConfigChange['kind'][]> = {
  rename: ['plan', 'tenant', 'token'],
  create: ['plan', 'tenant', 'token'],
  update: ['plan', 'tenant', 'token'],
  delete: ['token', 'tenant', 'plan'],
};

/** The short fingerprint a plan shows of a key (never the key). */
export const shownKey = (fingerprint: string) => `fingerprint ${fingerprint.slice(0, 16)}`;

export function planChanges(live: LiveFleet, desired: Desired, options: PlanOptions): Step[] {
  const steps: Step[] = [];
  const inSelection = (tags: string[]) => options.select === null || tags.includes(options.select);
  const deletes = options.mode === 'sync';

  // Plans: by ref, else a live plan of that name nobody else claims.
  const livePlans = new Map(live.plans.map((p) => [p.ref, p]));
  const claimed = new Set(desired.file.plans.map((p) => p.ref));
  const byName = new Map(live.plans.filter((p) => !claimed.has(p.ref)).map((p) => [p.name, p]));
  const matchedPlans = new Set<string>();
  for (const want of desired.file.plans) {
    const have = livePlans.get(want.ref) ?? byName.get(want.name) ?? null;
    if (!inSelection(want.tags) && !(have && inSelection(have.tags))) continue;
    if (have) matchedPlans.add(have.ref);
    steps.push(...planSteps(want, have));
  }
  if (deletes) {
    for (const have of [...live.plans].sort(byRef)) {
      if (matchedPlans.has(have.ref) || !inSelection(have.tags)) continue;
      steps.push(planStep(change('delete', 'plan', have, null), null, have));
    }
  }

  // Tenants and their tokens, by ref.
  const liveTenants = new Map(live.tenants.map((t) => [t.ref, t]));
  const matchedTenants = new Set<string>();
  for (const want of desired.file.tenants) {
    const have = liveTenants.get(want.ref) ?? null;
    if (!inSelection(want.tags) && !(have && inSelection(have.tags))) continue;
    if (have) matchedTenants.add(have.ref);
    steps.push(...tenantSteps(want, have, options));
  }
  if (deletes) {
    for (const have of [...live.tenants].sort(byRef)) {
      if (matchedTenants.has(have.ref) || !inSelection(have.tags)) continue;
      steps.push(tenantStep(change('delete', 'tenant', have, null), null, have, 'keep'));
    }
  }
  return ORDER.flatMap((op) =>
    KIND_ORDER[op].flatMap((kind) =>
      steps.filter((s) => s.change.op === op && s.change.kind === kind),
    ),
  );

  function planSteps(want: PlanEntry, have: LivePlan | null): Step[] {
    if (!have) {
      const fields = [diff('limits', null, want.limits), diff('tags', null, want.tags)];
      return [planStep(change('create', 'plan', want, fields), want, null)];
    }
    const out: Step[] = [];
    if (want.name !== have.name) {
      const fields = [diff('name', have.name, want.name)];
      out.push(planStep(change('rename', 'plan', have, fields), want, have));
    }
    const fields = changed([
      ['ref', have.ref, want.ref],
      ['limits', have.limits, want.limits],
      ['tags', have.tags, want.tags],
    ]);
    if (fields.length > 0) {
      out.push(planStep(change('update', 'plan', have, fields, want.name), want, have));
    }
    return out;
  }

  function tenantSteps(want: TenantEntry, have: LiveTenant | null, o: PlanOptions): Step[] {
    const key = o.keyOf(want);
    const out: Step[] = [];
    if (!have) {
      const fields = changed([
        ['status', 'active', want.status],
        ['plan', null, want.plan],
        ['platform_key_ref', null, want.platform_key_ref],
        ['cors_origins', [], want.cors_origins],
        ['limits', null, want.limits],
        ['alerts', null, want.alerts],
        ['tags', [], want.tags],
      ]);
      out.push(tenantStep(change('create', 'tenant', want, fields), want, null, key));
      for (const token of want.tokens) out.push(tokenCreate(want.ref, token, null, o));
      return out;
    }
    if (want.name !== have.name) {
      const fields = [diff('name', have.name, want.name)];
      out.push(tenantStep(change('rename', 'tenant', have, fields), want, have, key));
    }
    const keyChange: [string, unknown, unknown][] =
      typeof key === 'object' && key.fingerprint !== have.key_fingerprint
        ? [['platform_key', shownKey(have.key_fingerprint), shownKey(key.fingerprint)]]
        : [];
    const fields = changed([
      ['status', have.status, want.status],
      ['plan', have.plan, want.plan],
      ...keyChange,
      ['platform_key_ref', have.platform_key_ref, want.platform_key_ref],
      ['cors_origins', have.cors_origins, want.cors_origins],
      ['limits', have.limits, want.limits],
      ['alerts', have.alerts, want.alerts],
      ['tags', have.tags, want.tags],
    ]);
    if (fields.length > 0) {
      out.push(tenantStep(change('update', 'tenant', have, fields, want.name), want, have, key));
    }
    const liveTokens = new Map(have.tokens.map((t) => [t.ref, t]));
    for (const token of want.tokens) {
      const had = liveTokens.get(token.ref);
      liveTokens.delete(token.ref);
      if (!had) {
        out.push(tokenCreate(want.ref, token, have.id, o));
        continue;
      }
      const at = { tenant_ref: want.ref, tenantId: have.id };
      if (token.name !== had.name) {
        const renamed = change('rename', 'token', had, [diff('name', had.name, token.name)]);
        out.push(tokenStep({ ...renamed, tenant_ref: at.tenant_ref }, token, had, at.tenantId));
      }
      const tokenFields = changed([
        ['scopes', had.scopes, token.scopes],
        ['expires_at', had.expires_at, token.expires_at],
        ['limits', had.limits, token.limits],
      ]);
      if (tokenFields.length > 0) {
        const updated = change('update', 'token', had, tokenFields, token.name);
        out.push(tokenStep({ ...updated, tenant_ref: at.tenant_ref }, token, had, at.tenantId));
      }
    }
    if (deletes) {
      for (const gone of [...liveTokens.values()].sort(byRef)) {
        const removed = { ...change('delete', 'token', gone, null), tenant_ref: want.ref };
        out.push(tokenStep(removed, null, gone, have.id));
      }
    }
    return out;
  }
}

function tokenCreate(
  tenantRef: string,
  token: TokenEntryOf,
  tenantId: string | null,
  o: PlanOptions,
): Step {
  const fields = changed([
    ['scopes', null, token.scopes],
    ['expires_at', null, token.expires_at],
    ['limits', null, token.limits],
  ]);
  const made = { ...change('create', 'token', token, fields), tenant_ref: tenantRef };
  const source = o.tokenSource(tenantRef, token.ref);
  if (source) Object.assign(made, source);
  return tokenStep(made, token, null, tenantId);
}

function planStep(c: ConfigChange, desired: PlanEntry | null, live: LivePlan | null): Step {
  return { change: c, kind: 'plan', desired, live };
}

function tenantStep(
  c: ConfigChange,
  desired: TenantEntry | null,
  live: LiveTenant | null,
  key: KeyGiven,
): Step {
  return { change: c, kind: 'tenant', desired, live, key };
}

function tokenStep(
  c: ConfigChange,
  desired: TokenEntryOf | null,
  live: LiveToken | null,
  tenantId: string | null,
): Step {
  return { change: c, kind: 'token', desired, live, tenantId };
}

type Named = { ref: string; name: string; id?: string };

function change(
  op: ConfigChange['op'],
  kind: ConfigChange['kind'],
  object: Named,
  fields: ConfigFieldChange[] | null,
  name = object.name,
): ConfigChange {
  const id = kind === 'plan' ? (op === 'create' ? null : object.name) : (object.id ?? null);
  return {
    op,
    kind,
    ref: object.ref,
    tenant_ref: null,
    id,
    name,
    fields: fields ?? [],
    source: null,
    note: null,
  };
}

const diff = (field: string, before: unknown, after: unknown): ConfigFieldChange => ({
  field,
  before,
  after,
});

/** The fields whose values differ. */
function changed(pairs: [string, unknown, unknown][]): ConfigFieldChange[] {
  return pairs.filter(([, a, b]) => !same(a, b)).map(([field, a, b]) => diff(field, a, b));
}
