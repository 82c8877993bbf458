/**
 * A fleet file as the gateway takes it: checked whole, every problem named by its path in
 * the file (`tenants[2].tokens[0].limits.quota.daily`), and normalized as the gateway
 * stores values (scopes as granted, thresholds sorted, times in UTC), so a file and a dump
 * of what it made compare equal. Pure.
 *
 * Refused: what the schema refuses; a ref or plan name given twice; a tenant on a plan
 * that is neither in the file nor the fleet; a token given more than its tenant (a quota
 * above the tenant's, or a rate policy above the tenant's policy of the same window); a
 * new tenant whose key is `keep` or whose variable was not sent; an unknown scope; an
 * expiry past or beyond 5 years; a webhook URL the gateway refuses; deleting a plan that
 * tenants outside the file's selection are on.
 */

import type { Limits, TokenLimits } from '../../types/settings';
import type { FieldError } from '../../types/wire';
import { type FleetFile, fleetFileSchema, type TenantEntry } from '../config-file';
import type { LiveFleet } from './model';

export interface Desired {
  file: FleetFile;
}

export interface DesiredContext {
  live: LiveFleet;
  mode: 'sync' | 'apply';
  select: string | null;
  now: number;
  defaults: Limits;
  /** Scopes as the gateway grants them (presets by name), and the names it does not know. */
  grant(scopes: string[]): { scopes: string[]; unknown: string[] };
  /** Why a webhook URL is refused, or null. */
  webhookProblem(url: string): string | null;
  /** Whether the request gives a key for this tenant (env:NAME sent, or a backup's key). */
  hasKey(tenant: TenantEntry): boolean;
  /** Longest a token may live from now (ms). */
  maxTokenLifetimeMs: number;
}

export type Checked = { ok: true; desired: Desired } | { ok: false; problems: FieldError[] };

const problem = (field: string, message: string): FieldError => ({
  location: 'body',
  field,
  message: message.startsWith(field) ? message : `${field}: ${message}`,
});

/** `tenants[2].tokens[0].name` from a zod issue's path. */
export function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || 'file';
}

export function checkFile(raw: unknown, ctx: DesiredContext): Checked {
  const parsed = fleetFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((k) => problem(pathOf([...issue.path, k]), 'is not a known field'))
        : [problem(pathOf(issue.path), issue.message)],
    );
    return { ok: false, problems };
  }
  const file = normalized(parsed.data, ctx);
  const problems = [...file.problems, ...semanticProblems(file.file, ctx)];
  return problems.length > 0 ? { ok: false, problems } : { ok: true, desired: { file: file.file } };
}

/** Values as the gateway keeps them; unknown scopes are problems. */
function normalized(file: FleetFile, ctx: DesiredContext) {
  const problems: FieldError[] = [];
  const tenants = file.tenants.map((tenant, t) => ({
    ...tenant,
    tags: [...new Set(tenant.tags)].sort(),
    alerts: tenant.alerts && {
      ...tenant.alerts,
      thresholds: [...new Set(tenant.alerts.thresholds)].sort((a, b) => a - b),
    },
    tokens: tenant.tokens.map((token, k) => {
      const { scopes, unknown } = ctx.grant(token.scopes);
      if (unknown.length > 0) {
        problems.push(
          problem(`tenants[${t}].tokens[${k}].scopes`, `unknown scope ${unknown.join(', ')}`),
        );
      }
      const expires = token.expires_at === null ? null : new Date(token.expires_at).toISOString();
      return { ...token, scopes, expires_at: expires };
    }),
  }));
  const plans = file.plans.map((plan) => ({ ...plan, tags: [...new Set(plan.tags)].sort() }));
  return { file: { ...file, plans, tenants }, problems };
}

function semanticProblems(file: FleetFile, ctx: DesiredContext): FieldError[] {
  const problems: FieldError[] = [];
  const twice = <T>(
    items: T[],
    keyOf: (item: T) => string,
    path: (i: number) => string,
    what: string,
  ) => {
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      const key = keyOf(item);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else
        problems.push(problem(path(i), `${what} ${key} is given twice (first at ${path(first)})`));
    });
  };
  twice(
    file.plans,
    (p) => p.ref,
    (i) => `plans[${i}].ref`,
    'ref',
  );
  twice(
    file.plans,
    (p) => p.name,
    (i) => `plans[${i}].name`,
    'plan name',
  );
  twice(
    file.tenants,
    (t) => t.ref,
    (i) => `tenants[${i}].ref`,
    'ref',
  );
  file.tenants.forEach((tenant, t) => {
    twice(
      tenant.tokens,
      (k) => k.ref,
      (i) => `tenants[${t}].tokens[${i}].ref`,
      'ref',
    );
  });

  // A plan rename or a new plan may not take a name another plan of the fleet keeps.
  const livePlanByRef = new Map(ctx.live.plans.map((p) => [p.ref, p]));
  const claimed = new Set(file.plans.map((p) => p.ref));
  file.plans.forEach((plan, i) => {
    const holder = ctx.live.plans.find((p) => p.name === plan.name);
    const mine =
      livePlanByRef.get(plan.ref) ?? (holder && !claimed.has(holder.ref) ? holder : null);
    if (holder && mine && holder !== mine) {
      problems.push(
        problem(
          `plans[${i}].name`,
          `plan ${holder.name} (ref ${holder.ref}) holds this name: rename or remove it in an apply of its own first`,
        ),
      );
    }
  });

  // The plans there will be: the fleet's, less those a sync deletes, and the file's.
  const inSelection = (tags: string[]) => ctx.select === null || tags.includes(ctx.select);
  const named = new Set([...file.plans.map((p) => p.ref), ...file.plans.map((p) => p.name)]);
  const limitsOfPlan = new Map<string, Limits>();
  for (const p of ctx.live.plans) {
    const deleted =
      ctx.mode === 'sync' && inSelection(p.tags) && !named.has(p.ref) && !named.has(p.name);
    if (!deleted) limitsOfPlan.set(p.ref, p.limits);
  }
  for (const p of file.plans) limitsOfPlan.set(p.ref, p.limits);
  file.tenants.forEach((tenant, t) => {
    const at = `tenants[${t}]`;
    if (tenant.plan !== null && !limitsOfPlan.has(tenant.plan)) {
      problems.push(
        problem(`${at}.plan`, `there is no plan with ref ${tenant.plan}, in the file or the fleet`),
      );
    }
    const live = ctx.live.tenants.find((x) => x.ref === tenant.ref);
    if (!live && tenant.platform_key_ref === 'keep') {
      problems.push(
        problem(
          `${at}.platform_key_ref`,
          'keep needs a tenant that exists: name env:VARIABLE for a new one',
        ),
      );
    } else if (!live && !ctx.hasKey(tenant)) {
      problems.push(
        problem(
          `${at}.platform_key_ref`,
          `${tenant.platform_key_ref} was not given (the CLI sends the variable's value)`,
        ),
      );
    }
    if (tenant.alerts) {
      const refused = ctx.webhookProblem(tenant.alerts.url);
      if (refused) problems.push(problem(`${at}.alerts.url`, refused));
    }
    const tenantLimits =
      tenant.limits ?? (tenant.plan ? limitsOfPlan.get(tenant.plan) : null) ?? ctx.defaults;
    tenant.tokens.forEach((token, k) => {
      const path = `${at}.tokens[${k}]`;
      const liveToken = live?.tokens.find((x) => x.ref === token.ref);
      if (token.expires_at !== null && token.expires_at !== liveToken?.expires_at) {
        const ends = Date.parse(token.expires_at);
        if (ends <= ctx.now) problems.push(problem(`${path}.expires_at`, 'must be in the future'));
        else if (ends > ctx.now + ctx.maxTokenLifetimeMs) {
          problems.push(problem(`${path}.expires_at`, 'must be within 5 years'));
        }
      }
      if (token.limits) {
        for (const p of beyondTenant(token.limits, tenantLimits))
          problems.push(problem(`${path}.limits.${p.field}`, p.message));
      }
    });
  });

  if (ctx.mode === 'sync') problems.push(...plansLeftInUse(file, ctx));
  return problems;
}

/** Where a token's own limits give it more than its tenant has. */
export function beyondTenant(
  token: TokenLimits,
  tenant: Limits,
): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  for (const period of ['daily', 'monthly'] as const) {
    const mine = token.quota[period];
    const theirs = tenant.quota[period];
    if (mine !== undefined && theirs !== undefined && mine > theirs) {
      out.push({
        field: `quota.${period}`,
        message: `${mine} is more than its tenant's ${period} quota (${theirs})`,
      });
    }
  }
  token.policies.forEach((policy, i) => {
    for (const theirs of tenant.policies) {
      if (theirs.window_s === policy.window_s && policy.limit > theirs.limit) {
        out.push({
          field: `policies[${i}].limit`,
          message: `${policy.limit} in ${policy.window_s} s is more than its tenant's policy ${theirs.name} (${theirs.limit} in ${theirs.window_s} s)`,
        });
      }
    }
  });
  return out;
}

/** A plan sync would delete while tenants it does not move stay on it. */
function plansLeftInUse(file: FleetFile, ctx: DesiredContext): FieldError[] {
  const inSelection = (tags: string[]) => ctx.select === null || tags.includes(ctx.select);
  const kept = new Set(file.plans.map((p) => p.ref));
  const keptNames = new Set(file.plans.map((p) => p.name));
  const moved = new Set(
    ctx.live.tenants
      .filter((t) => {
        const want = file.tenants.find((x) => x.ref === t.ref);
        return inSelection(t.tags) || (want && inSelection(want.tags));
      })
      .map((t) => t.id),
  );
  const out: FieldError[] = [];
  for (const plan of ctx.live.plans) {
    if (kept.has(plan.ref) || keptNames.has(plan.name) || !inSelection(plan.tags)) continue;
    const staying = plan.members.filter((id) => !moved.has(id));
    if (staying.length > 0) {
      out.push(
        problem(
          'plans',
          `plan ${plan.name} (ref ${plan.ref}) would be deleted while ${staying.length} tenant(s) outside this file's selection are on it (${staying.slice(0, 5).join(', ')})`,
        ),
      );
    }
  }
  return out;
}
