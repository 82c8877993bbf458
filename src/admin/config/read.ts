/**
 * The live fleet in the fleet file's terms (model.ts), read for a dump or a plan: the
 * ConfigBook's refs and tags, the tenants' records (KV), plans and members (PlanBook), and
 * each tenant's own limits, webhook and tokens (its TenantGuard).
 *
 * One consistent read: every operator change is audited once made, so the read is
 * taken between two looks at the audit log's newest entry and made again (at most
 * READ_TRIES times) when an entry came in meanwhile. An apply then reads again and
 * compares the plan's hash, so a change that lands after the plan is never overwritten.
 */
import type { Context } from 'hono';
import { GatewayError } from '../../errors';
import type { Limits } from '../../metering/policy';
import { auditLog } from '../../objects/audit/audit-log';
import { configBook, type RefRow } from '../../objects/config/config-book';
import { planBook } from '../../objects/plans/plan-book';
import type { HonoEnv } from '../../types/context';
import type { TenantMetadata } from '../../types/tenants';
import type { AuditPage } from '../../types/wire';
import { adminStores, guardFor } from '../common';
import { CONFIG_MAX_TENANTS } from '../config-file';
import type { LiveFleet, LivePlan, LiveTenant, LiveToken } from './model';

/** Reads of the fleet one plan makes at most while changes keep coming in. */
const READ_TRIES = 3;
/** Tenants read at once (each a KV read and three TenantGuard calls). */
const READ_AT_ONCE = 25;

/** Which tenants to read whole, by their ref and tags (the others are counted only). */
export type Wanted = (ref: string, tags: string[]) => boolean;

export async function readFleet(c: Context<HonoEnv>, wanted: Wanted): Promise<LiveFleet> {
  for (let attempt = 1; ; attempt++) {
    const before = await newestAudit(c);
    const fleet = await readOnce(c, wanted);
    if ((await newestAudit(c)) === before) return fleet;
    if (attempt === READ_TRIES) {
      throw new GatewayError('CONFLICT', {
        message: `The fleet kept changing while it was read (${READ_TRIES} tries): plan again shortly`,
      });
    }
  }
}

async function newestAudit(c: Context<HonoEnv>): Promise<number> {
  const page: AuditPage = await auditLog(c.env).list(1, 1);
  return page.data[0]?.id ?? 0;
}

async function readOnce(c: Context<HonoEnv>, wanted: Wanted): Promise<LiveFleet> {
  const [refs, metas, planList] = await Promise.all([
    configBook(c.env).refs(),
    allTenants(c),
    planBook(c.env).list(),
  ]);
  const refOf = refIndex(refs);
  const memberships = await planBook(c.env).plansOf(metas.map((m) => m.id));
  const planRefByName = new Map<string, string>();
  const plans: LivePlan[] = planList.map((p) => {
    const row = refOf('plan', '', p.name);
    planRefByName.set(p.name, row?.ref ?? p.name);
    return {
      ref: row?.ref ?? p.name,
      name: p.name,
      tags: row?.tags ?? [],
      limits: p.limits,
      members: metas.filter((m) => memberships[m.id] === p.name).map((m) => m.id),
    };
  });
  const chosen = metas.filter((m) => {
    const row = refOf('tenant', '', m.id);
    return wanted(row?.ref ?? m.id, row?.tags ?? []);
  });
  if (chosen.length > CONFIG_MAX_TENANTS) {
    throw new GatewayError('VALIDATION_FAILED', {
      message: `The selection reaches ${chosen.length} tenants; one plan reads at most ${CONFIG_MAX_TENANTS}: narrow it with --select`,
    });
  }
  const tenants: LiveTenant[] = [];
  for (let at = 0; at < chosen.length; at += READ_AT_ONCE) {
    const batch = chosen.slice(at, at + READ_AT_ONCE);
    const read = await Promise.all(
      batch.map((m) =>
        readTenant(
          c,
          m.id,
          refOf,
          (name) => planRefByName.get(name) ?? name,
          memberships[m.id] ?? null,
        ),
      ),
    );
    for (const tenant of read) if (tenant) tenants.push(tenant);
  }
  return { plans, tenants };
}

/** The ConfigBook's rows by object. */
function refIndex(rows: RefRow[]) {
  const index = new Map(rows.map((r) => [`${r.kind} ${r.scope} ${r.target}`, r]));
  return (kind: RefRow['kind'], scope: string, target: string) =>
    index.get(`${kind} ${scope} ${target}`);
}

/** Every tenant's list row (KV metadata), a thousand a call. */
async function allTenants(c: Context<HonoEnv>): Promise<TenantMetadata[]> {
  const { tenants } = await adminStores(c);
  const out: TenantMetadata[] = [];
  let cursor: string | undefined;
  do {
    const page = await tenants.list(cursor, 1000);
    out.push(...page.tenants);
    cursor = page.cursor ?? undefined;
  } while (cursor);
  return out;
}

async function readTenant(
  c: Context<HonoEnv>,
  id: string,
  refOf: ReturnType<typeof refIndex>,
  planRef: (name: string) => string,
  planName: string | null,
): Promise<LiveTenant | null> {
  const stores = await adminStores(c);
  const guard = guardFor(c.env, id);
  const now = Date.now();
  const defaults: Limits = c.get('settings').DEFAULT_LIMITS;
  const [record, usage, alerts, listed] = await Promise.all([
    stores.tenants.getStored(id),
    guard.limits().usage(now, defaults),
    guard.alerts().settings(),
    guard.tokens().list(id, now),
  ]);
  if (!record) return null;
  const row = refOf('tenant', '', id);
  const tokens: LiveToken[] = listed
    .filter(
      (t) =>
        t.successor_id === null &&
        !t.revoked_at &&
        (t.expires_at === null || Date.parse(t.expires_at) > now),
    )
    .map((t) => ({
      id: t.id,
      family_id: t.family_id,
      ref: refOf('token', id, t.family_id)?.ref ?? t.family_id,
      name: t.name,
      scopes: t.scopes,
      expires_at: t.expires_at,
      limits: t.limits,
      tag_kid: t.tag_kid ?? null,
    }));
  return {
    id,
    ref: row?.ref ?? id,
    name: record.name,
    tags: row?.tags ?? [],
    status: record.status,
    plan: planName === null ? null : planRef(planName),
    platform_key_ref: row?.key_ref ?? 'keep',
    key_fingerprint: record.key_fingerprint,
    cors_origins: record.cors_origins ?? [],
    limits: usage.custom ? usage.limits : null,
    alerts: alerts && {
      url: alerts.url,
      thresholds: alerts.thresholds,
      server_error_percent: alerts.server_error_percent,
    },
    tokens,
  };
}
