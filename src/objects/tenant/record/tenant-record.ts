/**
 * A tenant's KV record (tenants/tenant-store.ts) and its index entries, changed
 * in one place: the tenant's TenantGuard. KV has no compare-and-set, and a
 * change merged into a record read before another change was written puts the
 * older fields back (a rename racing a disable wrote `active` over it). So each
 * change here takes its turn (waiters.ts: a Durable Object's input gates let
 * other calls in while one awaits KV) and merges into the record the change
 * before it decided; the operator API only asks (docs/SECURITY.md, "Tenant
 * record changes are made in one place").
 *
 * The decided record is kept in the guard's SQLite (kept-record.ts) before KV
 * is written, so it outlives the object. The guard is handed the record when the
 * tenant is created; KV, which may show another location's older copy for up to
 * 60 s, is read only to adopt a record the guard has none of (an older tenant).
 * A deletion leaves a tombstone. A change left half written (the object
 * failed or went away) is finished by the guard's alarm or the tenant's next change.
 */
import { keyRing } from '../../../tenants/crypto';
import { KeyIndex, OriginIndex } from '../../../tenants/indexes';
import { type TenantPatch, TenantStore } from '../../../tenants/tenant-store';
import type { StoredTenant } from '../../../types/tenants';
import { Turns } from '../../../waiters';
import type { Sql } from '../sql';
import { type KeptRecord, KeptRecordRow } from './kept-record';

/** Longest a change waits for the changes before it (each a few KV writes). */
const TURN_WAIT_MS = 30_000;

export interface RecordChange {
  before: StoredTenant;
  after: StoredTenant;
}

export type ResealOutcome = 'resealed' | 'current' | 'not_found';

export interface RecordHooks {
  /**
   * Brings what the guard holds beside the record in line with a change once KV has it
   * (`asked`: the patch that made it; empty when a change left half written is finished).
   */
  follow: (change: RecordChange, asked: TenantPatch) => Promise<void>;
  /** Called before KV is written: should the writes not all land, call finishHalfWritten. */
  retryLater: () => void;
}

export class TenantRecord {
  /** Which tenants share a platform key (cache versions follow keys). */
  readonly keys: KeyIndex;
  private readonly origins: OriginIndex;
  private readonly turns = new Turns();
  private readonly kept: KeptRecordRow;

  constructor(
    private readonly env: { TENANTS: KVNamespace; KEY_ENCRYPTION_KEY?: string },
    sql: Sql,
    private readonly hooks: RecordHooks,
  ) {
    this.keys = new KeyIndex(env.TENANTS);
    this.origins = new OriginIndex(env.TENANTS, 0);
    this.kept = new KeptRecordRow(sql);
  }

  /**
   * Merges `patch` into the current record and writes it with its indexes, then what the
   * guard holds beside it follows (in the same turn, so in the same order). Null when
   * there is no such tenant (nothing is written).
   */
  update(tenantId: string, patch: TenantPatch): Promise<RecordChange | null> {
    return this.turn(tenantId, async (before, store) => {
      if (!before) return null;
      const after = await store.merged(before, patch);
      await this.write(store, { before, after }, patch);
      return { before, after };
    });
  }

  /** Seals the platform key under the ring's current key (key rotation). */
  reseal(tenantId: string): Promise<ResealOutcome> {
    return this.turn(tenantId, async (before, store) => {
      if (!before) return 'not_found';
      const after = await store.resealed(before);
      if (!after) return 'current';
      await this.write(store, { before, after }, {});
      return 'resealed';
    });
  }

  /**
   * Deletes the record and its index entries, after `first` (in the same turn), and
   * keeps a tombstone; false when there was none. A change after this one finds no
   * tenant, whatever KV still shows.
   */
  remove(tenantId: string, first: () => Promise<void>): Promise<boolean> {
    return this.turn(tenantId, async (before, store) => {
      if (!before) return false;
      await first();
      await this.erase(store, before);
      return true;
    });
  }

  /**
   * Writes a change decided and left half written (the object failed or went away), in
   * its turn; the alarm calls this, the tenant's next change would do it too.
   */
  async finishHalfWritten(): Promise<void> {
    const halfWritten = this.kept.read()?.kvHolds;
    if (halfWritten) await this.turn(halfWritten.id, async () => {});
  }

  /**
   * Keeps a record just created, unless the guard has decided one already: its changes
   * then never wait for this location's KV to show it (up to 60 s).
   */
  adopt(created: StoredTenant): void {
    if (!this.kept.read()) this.kept.keep({ record: created });
  }

  /** Runs `work` with the current record (null: no such tenant) in turn with the changes. */
  withRecord<T>(tenantId: string, work: (record: StoredTenant | null) => Promise<T>): Promise<T> {
    return this.turn(tenantId, (record) => work(record));
  }

  private turn<T>(
    tenantId: string,
    work: (current: StoredTenant | null, store: TenantStore) => Promise<T>,
  ): Promise<T> {
    return this.turns.run(async () => {
      const store = await this.store();
      return work(await this.current(tenantId, store), store);
    }, TURN_WAIT_MS);
  }

  /** Decided first (SQLite), then written to KV, then followed; a failure leaves it to finish. */
  private async write(store: TenantStore, change: RecordChange, asked: TenantPatch) {
    this.kept.keep({ record: change.after, kvHolds: change.before });
    this.hooks.retryLater();
    await store.write(change.before, change.after);
    await this.hooks.follow(change, asked);
    this.kept.keep({ record: change.after });
  }

  /**
   * The record as this guard decided it; KV's copy is adopted once, when it has none (a
   * tenant created before guards were handed their record).
   */
  private async current(tenantId: string, store: TenantStore): Promise<StoredTenant | null> {
    const kept = this.kept.read();
    if (kept) {
      if (kept.kvHolds) await this.finish(store, kept, kept.kvHolds);
      return kept.record;
    }
    const adopted = await store.getStored(tenantId);
    // None is not kept: a tenant just created elsewhere may reach KV here later.
    if (adopted) this.kept.keep({ record: adopted });
    return adopted;
  }

  /** Writes a change decided but left half written (every step may be done again). */
  private async finish(store: TenantStore, kept: KeptRecord, kvHolds: StoredTenant) {
    if (kept.record) await this.write(store, { before: kvHolds, after: kept.record }, {});
    else await this.erase(store, kvHolds);
  }

  /** The tombstone first, then the record and its index entries leave KV. */
  private async erase(store: TenantStore, before: StoredTenant) {
    this.kept.keep({ record: null, kvHolds: before });
    this.hooks.retryLater();
    await store.delete(before);
    this.kept.keep({ record: null });
  }

  /** Reads KV directly (no memo); the ring (once per isolate) seals a new platform key. */
  private async store(): Promise<TenantStore> {
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    return new TenantStore(this.env.TENANTS, ring, this.keys, this.origins, 0);
  }
}
