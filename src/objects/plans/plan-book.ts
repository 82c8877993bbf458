/**
 * The PlanBook: one SQLite-backed Durable Object (named "global") that keeps
 * the plans (named limits) and which tenant is on which, and takes each plan
 * decision to the tenants' TenantGuards (docs/LIMITS.md, "Plans").
 *
 * - Every decision (a plan set, a tenant joining or leaving one) takes the next
 *   number of one counter (plan-protocol.ts); a guard keeps only newer ones, so
 *   a late or repeated push never undoes a later decision.
 * - A member row says which decision its guard should hold (`target`) and which
 *   it acknowledged (`applied`). A rollout pushes the members behind, at most
 *   PLAN_WAVE a call and PUSH_CONCURRENCY at a time. The book finishes a rollout
 *   on its own: while members are due its alarm is set for now, and each alarm
 *   pushes one wave (its own subrequest budget) and sets the next. A caller
 *   calling `rollout()` again only speeds it up: a wave claims its members (for
 *   PUSH_CLAIM_MS), so two rollouts at once push different members, and a wave
 *   cut short is pushed again when its claim ends. A guard that could not be
 *   reached is tried again from the alarm, backing off.
 * - The guard applies a push as it applies new limits: it tells its regional
 *   brokers before it answers, so the change holds everywhere within
 *   LEASE_MAX_MS of the rollout reaching it.
 */
import { DurableObject } from 'cloudflare:workers';
import { type Limits, limitsSchema } from '../../metering/policy';
import type { Plan } from '../../types/wire';
import { openTables } from '../tables';
import type { PlanPush } from '../tenant/plan-protocol';
import { guardFor } from '../tenant/tenant-guard';

/** Members pushed in one call (Workers allow 10,000 subrequests a call; docs/BOUNDS.md). */
export const PLAN_WAVE = 1000;
/** Guard calls of a rollout in flight at once. */
const PUSH_CONCURRENCY = 50;
/** How long a wave's members are left to it before another rollout pushes them again. */
const PUSH_CLAIM_MS = 60_000;
/** A guard that could not be reached is tried again after this, doubling, at most RETRY_MAX_MS. */
const RETRY_FIRST_MS = 5000;
const RETRY_MAX_MS = 300_000;

/** The one plan book. */
export function planBook(env: { PLAN_BOOK: DurableObjectNamespace<PlanBook> }) {
  return env.PLAN_BOOK.get(env.PLAN_BOOK.idFromName('global'));
}

/** What one rollout call did. */
export interface Rollout {
  /** Tenants whose guard took its decision in this call. */
  applied: string[];
  /** Members whose guard could not be reached in this call (tried again later). */
  failed: number;
  /** Members due now that this call left for the next (more than PLAN_WAVE were due). */
  due: number;
}

export type JoinOutcome =
  | { kind: 'joined'; plan: string | null; version: number }
  | { kind: 'no_such_plan' };

interface PlanRow extends Record<string, SqlStorageValue> {
  name: string;
  limits: string;
  version: number;
  updated_at: number;
  updated_by: string;
}

interface MemberRow extends Record<string, SqlStorageValue> {
  tenant_id: string;
  plan: string | null;
  target: number;
  tries: number;
}

/** The tables, made where missing at every start. */
const TABLES = `
  CREATE TABLE IF NOT EXISTS plans (
    name TEXT PRIMARY KEY, limits TEXT NOT NULL, version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, updated_by TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS members (
    tenant_id TEXT PRIMARY KEY, plan TEXT, target INTEGER NOT NULL,
    applied INTEGER NOT NULL DEFAULT 0, tries INTEGER NOT NULL DEFAULT 0,
    next_at INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS members_by_plan ON members (plan);
  CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
`;

export class PlanBook extends DurableObject<Cloudflare.Env> {
  private readonly sql = openTables(this.ctx, TABLES);
  /**
   * Members one rollout call pushes. Test-only knob: tests set it through
   * runInDurableObject to cut a rollout short; an evicted object starts at PLAN_WAVE.
   */
  waveSize = PLAN_WAVE;

  /** Every plan, by name, with how many tenants it has and how many have yet to take it. */
  list(): Plan[] {
    return this.sql
      .exec<PlanRow>('SELECT * FROM plans ORDER BY name')
      .toArray()
      .map((row) => this.described(row));
  }

  get(name: string): Plan | null {
    const row = this.planRow(name);
    return row ? this.described(row) : null;
  }

  /**
   * Sets a plan (new or changed) and takes it to its tenants: the first wave now, the
   * rest from the alarm (a caller may call `rollout()` while `due` is above 0, sooner).
   */
  async put(
    name: string,
    limits: Limits,
    actor: string,
    now: number,
  ): Promise<{ plan: Plan; rollout: Rollout }> {
    const version = this.next();
    this.sql.exec(
      `INSERT INTO plans (name, limits, version, updated_at, updated_by) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET limits = excluded.limits, version = excluded.version,
         updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
      name,
      JSON.stringify(limitsSchema.parse(limits)),
      version,
      now,
      actor,
    );
    this.sql.exec(
      'UPDATE members SET target = ?, tries = 0, next_at = 0 WHERE plan = ?',
      version,
      name,
    );
    const rollout = await this.rollout();
    const plan = this.get(name);
    if (!plan) throw new Error(`plan ${name} vanished`);
    return { plan, rollout };
  }

  /** Removes a plan no tenant is on; the tenants on it, otherwise. */
  remove(name: string): { kind: 'removed' | 'not_found' | 'in_use'; tenants: number } {
    if (!this.planRow(name)) return { kind: 'not_found', tenants: 0 };
    const tenants = this.count('plan = ?', name);
    if (tenants > 0) return { kind: 'in_use', tenants };
    this.sql.exec('DELETE FROM plans WHERE name = ?', name);
    return { kind: 'removed', tenants: 0 };
  }

  /**
   * Puts a tenant on a plan, or off its plan (`plan` null; also when the tenant is
   * deleted), and tells its guard at once (the alarm retries if it cannot be reached).
   */
  async join(tenantId: string, plan: string | null): Promise<JoinOutcome> {
    if (plan !== null && !this.planRow(plan)) return { kind: 'no_such_plan' };
    const version = this.next();
    this.sql.exec(
      `INSERT INTO members (tenant_id, plan, target) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET plan = excluded.plan, target = excluded.target,
         tries = 0, next_at = 0`,
      tenantId,
      plan,
      version,
    );
    const member = this.sql
      .exec<MemberRow>('SELECT * FROM members WHERE tenant_id = ?', tenantId)
      .one();
    await this.push([member], Date.now());
    return { kind: 'joined', plan, version };
  }

  /** A deleted tenant leaves its plan, if it is on one. */
  async leave(tenantId: string): Promise<void> {
    if (this.planOf(tenantId) !== null) await this.join(tenantId, null);
  }

  /** The plan a tenant is on, as decided here (null: none): the one place that says it. */
  planOf(tenantId: string): string | null {
    return this.plansOf([tenantId])[tenantId] ?? null;
  }

  /** The plans of several tenants (a page of the tenant list), by id; absent: none. */
  plansOf(tenantIds: string[]): Record<string, string> {
    const plans: Record<string, string> = {};
    const rows = this.sql.exec<{ tenant_id: string; plan: string | null }>(
      'SELECT tenant_id, plan FROM members WHERE tenant_id IN (SELECT value FROM json_each(?))',
      JSON.stringify(tenantIds),
    );
    for (const row of rows) if (row.plan !== null) plans[row.tenant_id] = row.plan;
    return plans;
  }

  /**
   * Pushes the next wave of members whose guard is behind and due. The alarm is set for
   * the rest before the first push, so they are pushed whether or not anyone calls again.
   */
  async rollout(): Promise<Rollout> {
    const now = Date.now();
    const due = this.sql
      .exec<MemberRow>(
        `SELECT tenant_id, plan, target, tries FROM members
         WHERE applied < target AND next_at <= ? ORDER BY tenant_id LIMIT ?`,
        now,
        this.waveSize + 1,
      )
      .toArray();
    const wave = due.slice(0, this.waveSize);
    const outcome = await this.push(wave, now);
    return { ...outcome, due: due.length - wave.length };
  }

  /** The next wave of a rollout, or members behind tried again. */
  override async alarm(): Promise<void> {
    await this.rollout();
  }

  /**
   * Sends each member its decision (PUSH_CONCURRENCY at a time) and notes what was taken.
   * The members are claimed and the alarm set first: a push cut short (the object
   * evicted, the caller gone) is made again when the claim ends.
   */
  private async push(members: MemberRow[], now: number): Promise<Omit<Rollout, 'due'>> {
    for (const m of members) {
      this.sql.exec(
        'UPDATE members SET next_at = ? WHERE tenant_id = ?',
        now + PUSH_CLAIM_MS,
        m.tenant_id,
      );
    }
    this.wake();
    const limitsOf = new Map<string, Limits>();
    const pushOf = (m: MemberRow): PlanPush => {
      if (m.plan === null) return { name: null, version: m.target, limits: null };
      let limits = limitsOf.get(m.plan);
      if (!limits) {
        const row = this.planRow(m.plan);
        limits = row ? (JSON.parse(row.limits) as Limits) : undefined;
        if (limits) limitsOf.set(m.plan, limits);
      }
      return { name: m.plan, version: m.target, limits: limits ?? null };
    };
    const applied: string[] = [];
    let failed = 0;
    for (let i = 0; i < members.length; i += PUSH_CONCURRENCY) {
      const batch = members.slice(i, i + PUSH_CONCURRENCY);
      const results = await Promise.allSettled(
        batch.map((m) => guardFor(this.env, m.tenant_id).limits().applyPlan(pushOf(m))),
      );
      results.forEach((r, j) => {
        const m = batch[j];
        if (!m) return;
        if (r.status === 'fulfilled') {
          applied.push(m.tenant_id);
          this.sql.exec(
            'UPDATE members SET applied = MAX(applied, ?), tries = 0, next_at = 0 WHERE tenant_id = ?',
            m.target,
            m.tenant_id,
          );
        } else {
          failed++;
          const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** m.tries);
          this.sql.exec(
            'UPDATE members SET tries = tries + 1, next_at = ? WHERE tenant_id = ?',
            now + wait,
            m.tenant_id,
          );
        }
      });
    }
    // A tenant that left its plan and whose guard knows it needs no row.
    this.sql.exec('DELETE FROM members WHERE plan IS NULL AND applied >= target');
    this.wake();
    return { applied, failed };
  }

  /** Sets the alarm for the first member behind (now, if one is due), or clears it. */
  private wake(): void {
    const next = this.sql
      .exec<{ at: number | null }>('SELECT MIN(next_at) AS at FROM members WHERE applied < target')
      .one().at;
    if (next === null) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }

  private described(row: PlanRow): Plan {
    return {
      name: row.name,
      limits: JSON.parse(row.limits) as Limits,
      version: row.version,
      updated_at: new Date(row.updated_at).toISOString(),
      updated_by: row.updated_by,
      tenants: this.count('plan = ?', row.name),
      pending: this.count('plan = ? AND applied < target', row.name),
    };
  }

  private planRow(name: string): PlanRow | undefined {
    return this.sql.exec<PlanRow>('SELECT * FROM plans WHERE name = ?', name).toArray()[0];
  }

  private count(where: string, ...args: SqlStorageValue[]): number {
    return this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM members WHERE ${where}`, ...args)
      .one().n;
  }

  /** The next decision number. */
  private next(): number {
    return this.sql
      .exec<{ n: number }>(
        `INSERT INTO counter (id, n) VALUES (1, 1)
         ON CONFLICT (id) DO UPDATE SET n = n + 1 RETURNING n`,
      )
      .one().n;
  }
}
