/**
 * The part of a tenant's TenantGuard that changes the tenant's KV record, one change
 * at a time (tenant-record.ts, kept-record.ts; docs/SECURITY.md, "Tenant record
 * changes are made in one place"), and what the guard holds beside it
 * (tenant-standing.ts): the disabled flag, which a status change sets, and the cache
 * version, which follows the platform key and a purge (cache-version.ts). Its table:
 * `tenant_record`; its settings: `disabled`, `cache_version`.
 */
import { log } from '../../../log';
import type { BrokerPush } from '../../../metering/lease-protocol';
import type { TenantPatch } from '../../../tenants/tenant-store';
import type { StoredTenant } from '../../../types/tenants';
import type { TenantIo } from '../io';
import type { Chores } from '../part';
import type { Sql } from '../sql';
import { newCacheVersion, versionForKey } from './cache-version';
import { type RecordChange, type ResealOutcome, TenantRecord } from './tenant-record';
import type { TenantStanding } from './tenant-standing';

/** A record change KV has not taken yet is tried again by the alarm this soon. */
const RESYNC_AFTER_MS = 5000;

/** What callers reach: the operator API's tenant changes, and other guards' cache versions. */
export const TENANT_RECORD_CALLS = [
  'welcome',
  'update',
  'reseal',
  'remove',
  'purgeCache',
  'setDisabled',
  'setCacheVersion',
  'cacheVersion',
] as const;

/** What the tenant-record part needs beside its table. */
export interface TenantRecordDeps {
  standing: TenantStanding;
  io: Pick<TenantIo, 'now' | 'wakeBy' | 'kv' | 'otherGuard'>;
  /** Pushes a change to the regional brokers holding a lease, before the answer. */
  tellBrokers(push: BrokerPush): Promise<void>;
}

export class TenantRecordPart implements Chores {
  private readonly record: TenantRecord;

  constructor(
    sql: Sql,
    private readonly deps: TenantRecordDeps,
  ) {
    const { io } = deps;
    this.record = new TenantRecord(io.kv, sql, {
      follow: (change, asked) => this.follow(change, asked),
      retryLater: () => io.wakeBy(io.now() + RESYNC_AFTER_MS),
    });
  }

  /**
   * A tenant just created: its record kept here from the start (tenant-record.ts, adopt),
   * and its platform key's cache version (admin/common.ts, welcomeTenant).
   */
  async welcome(created: StoredTenant, cacheVersion: string): Promise<void> {
    this.record.adopt(created);
    await this.setCacheVersion(cacheVersion);
  }

  /** A change of the tenant's record, made after every change before it. Null: no such tenant. */
  update(tenantId: string, patch: TenantPatch): Promise<RecordChange | null> {
    return this.record.update(tenantId, patch);
  }

  /** Re-seals the tenant's platform key under the ring's current key (key rotation). */
  reseal(tenantId: string): Promise<ResealOutcome> {
    return this.record.reseal(tenantId);
  }

  /**
   * The tenant's record and index entries leave KV, refused first (again, in case an
   * enable came in since DELETE began); false when it was gone already.
   */
  remove(tenantId: string): Promise<boolean> {
    return this.record.remove(tenantId, () => this.setDisabled(true));
  }

  /**
   * Cache purge (docs/CACHE.md, "Cache versions and purging"): a new cache version for
   * every tenant sharing this tenant's platform key, the key taken from the record in
   * its turn, so a purge and a key change are ordered. The tenants given it (this one
   * first), or null when there is no such tenant.
   */
  purgeCache(tenantId: string): Promise<string[] | null> {
    return this.record.withRecord(tenantId, async (record) => {
      if (!record) return null;
      const sharing = await this.record.keys.tenantsSharing(record.key_fingerprint);
      const tenants = [...new Set([tenantId, ...sharing])];
      const version = newCacheVersion();
      await Promise.all(
        tenants.map((t) =>
          t === tenantId
            ? this.setCacheVersion(version)
            : this.deps.io.otherGuard(t).setCacheVersion(version),
        ),
      );
      return tenants;
    });
  }

  /** Refused at once (disabled, deleted), or not, on every isolate within a lease. */
  async setDisabled(disabled: boolean): Promise<void> {
    await this.deps.tellBrokers(this.deps.standing.setDisabled(disabled));
  }

  async setCacheVersion(version: string): Promise<void> {
    await this.deps.tellBrokers(this.deps.standing.setCacheVersion(version));
  }

  cacheVersion(): string | null {
    return this.deps.standing.cacheVersion();
  }

  /** A change left half written (the object failed or went away) is finished (the alarm). */
  async catchUp(): Promise<number> {
    await this.record.finishHalfWritten().catch((err: unknown) => {
      // Its writes set the alarm again; the tenant's next change tries too.
      log.error('tenant_record.sync_failed', {
        error: err instanceof Error ? err.name : typeof err,
      });
    });
    return Number.POSITIVE_INFINITY;
  }

  /**
   * What the guard holds beside the record follows it, in the change's turn: a status
   * sets the disabled flag (asked for again, it is set again), a new platform key takes
   * that key's cache version.
   */
  private async follow({ before, after }: RecordChange, asked: TenantPatch): Promise<void> {
    if (asked.status || after.status !== before.status) {
      await this.setDisabled(after.status === 'disabled');
    }
    if (after.key_fingerprint === before.key_fingerprint) return;
    const version = await versionForKey(
      this.record.keys,
      after.id,
      after.key_fingerprint,
      (other) => this.deps.io.otherGuard(other).cacheVersion(),
    );
    await this.setCacheVersion(version);
  }
}
