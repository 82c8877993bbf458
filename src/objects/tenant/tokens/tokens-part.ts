/**
 * The part of a tenant's TenantGuard that decides its tokens (docs/SECURITY.md,
 * "Token changes are decided in one place"): issue, rotation, revocation and a
 * token's own limits, each decided in one synchronous step (token-changes.ts, over
 * token-registry.ts and token-standing.ts), then written to KV and the audit log in
 * decision order before the call answers, and pushed to the regional brokers. Its
 * tables: `tokens`, `token_audit_outbox`, `token_states`, `token_limits`,
 * `token_meters`; its setting: `tokens_adopted`.
 */
import { log } from '../../../log';
import type { BrokerPush } from '../../../metering/lease-protocol';
import type { TokenLimits } from '../../../metering/policy';
import type { TokenEntry } from '../../../tenants/token-store';
import type { TokenRecord } from '../../../types/tenants';
import type { TokenListing } from '../../../types/wire';
import { waitUntilDone } from '../../../waiters';
import type { NewAuditEntry } from '../../audit/audit-log';
import type { TenantIo } from '../io';
import type { Chores } from '../part';
import type { SettingsView } from '../settings';
import type { Sql } from '../sql';
import {
  type RestoredToken,
  type RevokeOutcome,
  type TokenAmendment,
  TokenChanges,
  type TokenSpecOf,
} from './token-changes';
import {
  type AuditContext,
  type MintedToken,
  migrateTokens,
  type RotateOutcome,
  TokenRegistry,
  works,
} from './token-registry';
import type { TokenStanding } from './token-standing';

/**
 * The tenant's tokens as another part decides them (the grants part: OAuth grants and
 * partners' keys), inside that part's own synchronous step: `ready` first, then the
 * decisions (none of which awaits), then `settle`, which writes them to KV and the
 * audit log in decision order and tells the brokers, before the part answers.
 */
export interface TokenDecider {
  /** Waits until the tenant's tokens are taken in: call it before deciding. */
  ready(tenantId: string): Promise<void>;
  /** A token's record as decided, or null. */
  get(tokenId: string): TokenRecord | null;
  /** Issues a token, as token-changes.ts decides it (`issue`). */
  issue: TokenChanges['issue'];
  /** A grant's token gets a new secret (token-changes.ts `renew`); null: gone or revoked. */
  renew: TokenChanges['renew'];
  /** Revokes one token; the entries it revoked (none when it already was). */
  revoke(tokenId: string, now: number, ctx: AuditContext): TokenEntry[];
  /** The records of the tokens that work at `now`. */
  working(now: number): TokenRecord[];
  /** An audit entry, sent after the decisions before it. */
  audit(entry: NewAuditEntry): void;
  /** Writes what was decided (KV, audit log) and tells the brokers. */
  settle(): Promise<void>;
}

/** A decision KV has not taken yet is tried again by the alarm this soon. */
const RESYNC_AFTER_MS = 5000;
/** A write to KV that failed is tried once more, after this pause (KV takes one write a second per key). */
const KV_RETRY_MS = 1100;
/**
 * Rounds of writing one call makes at most before it answers; the alarm writes the rest.
 * A change is decided (and answered) first: should KV refuse twice, or other calls keep
 * deciding for 10 rounds, KV holds it only once the alarm has written it (logged as
 * `tokens.sync_failed` or `tokens.sync_deferred`; docs/SECURITY.md, "Token changes are
 * decided in one place").
 */
const SYNC_ROUNDS = 10;

/** What callers reach: the operator API's token calls (and a partner's own rotation). */
export const TOKENS_CALLS = [
  'issue',
  'rotate',
  'revoke',
  'setLimits',
  'list',
  'removeAll',
  'amend',
  'restore',
  'heads',
] as const;

/** What the tokens part needs beside its tables. */
export interface TokensDeps {
  settings: SettingsView<'tokens_adopted'>;
  /** Token ends, own limits and lines, which admission reads (token-standing.ts). */
  standing: TokenStanding;
  io: Pick<TenantIo, 'now' | 'wakeBy' | 'tokenRecords' | 'audit'>;
  /** Pushes a change to the regional brokers holding a lease, before the answer. */
  tellBrokers(push: BrokerPush): Promise<void>;
  /** The start of the last hour a token was used in (the history part). */
  lastUsedHour(tokenId: string): number | null;
}

export class TokensPart implements Chores {
  private readonly registry: TokenRegistry;
  private readonly changes: TokenChanges;
  /** The one read of KV's tokens in progress for adoption (ready). */
  private adopting: Promise<void> | null = null;
  /** A call is writing decided token records to KV (sync). */
  private syncing = false;

  constructor(
    sql: Sql,
    private readonly deps: TokensDeps,
  ) {
    migrateTokens(sql);
    this.registry = new TokenRegistry(sql);
    this.changes = new TokenChanges(this.registry, deps.standing);
  }

  async issue(
    tenantId: string,
    minted: MintedToken,
    spec: TokenSpecOf,
    limits: TokenLimits | null,
    now: number,
  ): Promise<TokenEntry> {
    await this.ready(tenantId);
    const issued = this.changes.issue(tenantId, minted, spec, limits, now);
    await this.sync();
    if (limits) await this.deps.tellBrokers({ kind: 'reset' });
    return issued;
  }

  async rotate(
    tenantId: string,
    oldId: string,
    minted: MintedToken,
    until: number,
    now: number,
    ctx: AuditContext,
  ): Promise<RotateOutcome> {
    await this.ready(tenantId);
    const { outcome, pushes } = this.changes.rotate(oldId, minted, until, now, ctx);
    await this.sync();
    for (const push of pushes) await this.deps.tellBrokers(push);
    return outcome;
  }

  async revoke(
    tenantId: string,
    tokenId: string,
    withSuccessors: boolean,
    now: number,
    ctx: AuditContext,
  ): Promise<RevokeOutcome> {
    await this.ready(tenantId);
    const { outcome, pushes } = this.changes.revoke(tokenId, withSuccessors, now, ctx);
    await this.sync();
    for (const push of pushes) await this.deps.tellBrokers(push);
    return outcome;
  }

  /** A token's own limits; false when the tenant has no such (unrevoked) token. */
  async setLimits(tenantId: string, tokenId: string, limits: TokenLimits | null) {
    await this.ready(tenantId);
    if (!this.changes.setLimits(tokenId, limits)) return false;
    await this.deps.tellBrokers({ kind: 'reset' });
    return true;
  }

  /**
   * The tenant's tokens for the operator, oldest first, each with its own limits and
   * its last use (the hour, from the usage history).
   */
  async list(tenantId: string, now: number): Promise<TokenListing[]> {
    await this.ready(tenantId);
    return this.changes.list(now).map((t) => {
      const hour = this.deps.lastUsedHour(t.id);
      return { ...t, last_used_at: hour === null ? null : new Date(hour).toISOString() };
    });
  }

  /** The tenant is deleted: every record of its tokens leaves KV. */
  async removeAll(tenantId: string): Promise<TokenEntry[]> {
    await this.ready(tenantId);
    const removed = this.registry.all();
    this.registry.removeAll();
    await this.sync();
    return removed;
  }

  /**
   * A working token's name, scopes or expiry changed in place (the fleet file,
   * docs/CONFIG-AS-CODE.md); null when there is none.
   */
  async amend(
    tenantId: string,
    tokenId: string,
    patch: TokenAmendment,
  ): Promise<TokenEntry | null> {
    await this.ready(tenantId);
    const amended = this.changes.amend(tokenId, patch);
    await this.sync();
    return amended;
  }

  /** Tokens taken back from a sealed backup; the ids it took (those it held already are left). */
  async restore(tenantId: string, tokens: RestoredToken[]): Promise<string[]> {
    await this.ready(tenantId);
    const taken = tokens
      .filter((t) => t.record.tenant_id === tenantId && this.changes.restore(t))
      .map((t) => t.record.id);
    await this.sync();
    if (tokens.some((t) => t.limits)) await this.deps.tellBrokers({ kind: 'reset' });
    return taken;
  }

  /** The working tokens heading their families, with hashes and own limits (sealed backups). */
  async heads(tenantId: string, now: number): Promise<RestoredToken[]> {
    await this.ready(tenantId);
    return this.changes.heads(now);
  }

  /** Decisions on the tenant's tokens for another part of the guard (TokenDecider). */
  decider(): TokenDecider {
    const pushes: BrokerPush[] = [];
    const { changes, registry, deps } = this;
    return {
      ready: (tenantId) => this.ready(tenantId),
      get: (tokenId) => registry.get(tokenId)?.record ?? null,
      issue: (tenantId, minted, spec, limits, now, marks) => {
        if (limits) pushes.push({ kind: 'reset' });
        return changes.issue(tenantId, minted, spec, limits, now, marks);
      },
      renew: (tokenId, minted, change) => changes.renew(tokenId, minted, change),
      revoke: (tokenId, now, ctx) => {
        const decided = changes.revoke(tokenId, false, now, ctx);
        pushes.push(...decided.pushes);
        return decided.outcome.revoked;
      },
      working: (now) =>
        registry
          .list(now)
          .map((row) => row.record)
          .filter((r) => works(r, now) && (deps.standing.endOf(r.id)?.at ?? Infinity) > now),
      audit: (entry) => registry.queueAudit(entry),
      settle: async () => {
        await this.sync();
        for (const push of pushes.splice(0)) await deps.tellBrokers(push);
      },
    };
  }

  /** A token's own limits, or null. */
  limitsOf(tokenId: string): TokenLimits | null {
    return this.deps.standing.limitsOf(tokenId);
  }

  /** Rows no longer listed (KV no longer holds their record either). */
  sweep(now: number): void {
    this.registry.sweep(now);
  }

  /** What a call decided and could not write (the alarm). */
  async catchUp(): Promise<number> {
    if (this.registry.hasPending()) await this.sync();
    return Number.POSITIVE_INFINITY;
  }

  /**
   * Once per tenant: the tokens KV held before this guard decided them are taken in.
   * Every token call waits for that one read of KV, so no token decision is made
   * without them; other calls (admissions, usage) go on meanwhile. Nothing else
   * writes a tenant's token records, so KV cannot change between the read and its
   * adoption (one synchronous step). Calls share that one promise: a Durable Object's
   * requests share its I/O context, so workerd does not cancel it under another call.
   */
  private async ready(tenantId: string): Promise<void> {
    if (this.adopted()) return;
    this.adopting ??= this.deps.io.tokenRecords
      .stored(tenantId)
      .then((entries) => {
        if (this.adopted()) return;
        // A rotated token's family is the line whose meters it shares.
        const { standing } = this.deps;
        this.registry.adopt(
          entries,
          (id) => standing.lineOf(id),
          (id) => standing.endOf(id),
        );
        this.deps.settings.put('tokens_adopted', 'true');
      })
      .finally(() => {
        this.adopting = null;
      });
    await this.adopting;
    // What the guard knew better (a revocation KV had lost) goes back to KV.
    await this.sync();
  }

  private adopted(): boolean {
    return this.deps.settings.get('tokens_adopted') === 'true';
  }

  /**
   * Writes what was decided and KV lacks, and the audit entries not yet sent, one
   * writer at a time: each write is the token's latest decided record, so whatever
   * the order calls finish in, KV ends with the last decision. A call waits for a
   * write in progress (polling: it never awaits another call's I/O), then writes
   * what is still missing. What cannot be written now is left to the alarm.
   */
  private async sync(): Promise<void> {
    const { io } = this.deps;
    // Each round writes what was pending when it began; decisions made meanwhile (by
    // other calls, which wait here) are written by the next round.
    for (let round = 0; round < SYNC_ROUNDS; round++) {
      if (this.syncing) {
        await waitUntilDone(() => !this.syncing, 30_000);
        continue;
      }
      if (!this.registry.hasPending()) return;
      // Should this object end before the writes do, its alarm finishes them.
      io.wakeBy(io.now() + RESYNC_AFTER_MS);
      this.syncing = true;
      try {
        for (const write of this.registry.pendingWrites()) {
          await retriedOnce(() =>
            write.removed ? io.tokenRecords.erase(write) : io.tokenRecords.write(write),
          );
          this.registry.written(write.record.id, write.version);
        }
        for (const { seq, entry } of this.registry.pendingAudits()) {
          log.info(`audit.${entry.action}`, entry);
          await retriedOnce(() => io.audit(entry));
          this.registry.audited(seq);
        }
      } catch (err) {
        // The alarm set above tries again.
        log.error('tokens.sync_failed', { error: err instanceof Error ? err.name : typeof err });
        return;
      } finally {
        this.syncing = false;
      }
    }
    // Decided, answered, not yet in KV: the alarm set above writes the rest.
    if (this.registry.hasPending()) {
      log.warn('tokens.sync_deferred', { rounds: SYNC_ROUNDS, retry_in_ms: RESYNC_AFTER_MS });
    }
  }
}

async function retriedOnce(write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch {
    await new Promise((resolve) => setTimeout(resolve, KV_RETRY_MS));
    await write();
  }
}
