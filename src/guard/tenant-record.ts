/**
 * A tenant's KV record (tenants/tenant-store.ts) and its index entries, changed
 * in one place: the tenant's TenantGuard. KV has no compare-and-set, and a
 * change merged into a record read before another change was written puts the
 * older fields back (a rename racing a disable wrote `active` over it). So each
 * change here takes its turn (waiters.ts: a Durable Object's input gates let
 * other calls in while one awaits KV) and merges into the record the change
 * before it left; the operator API only asks (docs/SECURITY.md, "Tenant record
 * changes are made in one place").
 *
 * KV is read once per object life; after that the record is kept as this
 * object last wrote it, so no change depends on KV showing at once a write
 * just made. A turn that fails reads KV again next time.
 */
import { keyRing } from '../tenants/crypto';
import { KeyIndex, OriginIndex } from '../tenants/indexes';
import { type TenantPatch, TenantStore } from '../tenants/tenant-store';
import type { StoredTenant } from '../types/tenants';
import { Turns } from '../waiters';

/** Longest a change waits for the changes before it (each a few KV writes). */
const TURN_WAIT_MS = 30_000;

export interface RecordChange {
  before: StoredTenant;
  after: StoredTenant;
}

export type ResealOutcome = 'resealed' | 'current' | 'not_found';

export class TenantRecord {
  /** Which tenants share a platform key (cache versions follow keys). */
  readonly keys: KeyIndex;
  private readonly origins: OriginIndex;
  private readonly turns = new Turns();
  /** The record as this object last read or wrote it (null: it deleted it); absent: ask KV. */
  private latest: { tenantId: string; record: StoredTenant | null } | undefined;

  constructor(private readonly env: { TENANTS: KVNamespace; KEY_ENCRYPTION_KEY?: string }) {
    this.keys = new KeyIndex(env.TENANTS);
    this.origins = new OriginIndex(env.TENANTS, 0);
  }

  /**
   * Merges `patch` into the current record and writes it with its indexes, then runs
   * `alongside` in the same turn (what the guard holds beside the record, so it follows
   * the same order). Null when there is no such tenant (nothing is written).
   */
  update(
    tenantId: string,
    patch: TenantPatch,
    alongside: (change: RecordChange) => Promise<void>,
  ): Promise<RecordChange | null> {
    return this.turn(tenantId, async (before, store) => {
      if (!before) return null;
      const after = await store.update(before, patch);
      this.latest = { tenantId, record: after };
      await alongside({ before, after });
      return { before, after };
    });
  }

  /** Seals the platform key under the ring's current key (key rotation). */
  reseal(tenantId: string): Promise<ResealOutcome> {
    return this.turn(tenantId, async (stored, store) => {
      if (!stored) return 'not_found';
      const resealed = await store.reseal(stored);
      if (!resealed) return 'current';
      this.latest = { tenantId, record: resealed };
      return 'resealed';
    });
  }

  /**
   * Deletes the record and its index entries, after `first` (in the same turn);
   * false when there was none. A change after this one finds no tenant.
   */
  remove(tenantId: string, first: () => Promise<void>): Promise<boolean> {
    return this.turn(tenantId, async (stored, store) => {
      if (!stored) return false;
      await first();
      await store.delete(stored);
      this.latest = { tenantId, record: null };
      return true;
    });
  }

  private turn<T>(
    tenantId: string,
    change: (stored: StoredTenant | null, store: TenantStore) => Promise<T>,
  ): Promise<T> {
    return this.turns.run(async () => {
      try {
        const store = await this.store();
        return await change(await this.current(tenantId, store), store);
      } catch (err) {
        // A change may have been half written: the next one reads what KV holds.
        this.latest = undefined;
        throw err;
      }
    }, TURN_WAIT_MS);
  }

  private async current(tenantId: string, store: TenantStore): Promise<StoredTenant | null> {
    if (this.latest?.tenantId === tenantId) return this.latest.record;
    const record = await store.getStored(tenantId);
    // A record not found is asked for again: one just created elsewhere may reach KV here later.
    if (record) this.latest = { tenantId, record };
    return record;
  }

  /** Reads KV directly (no memo); the ring (once per isolate) seals a new platform key. */
  private async store(): Promise<TenantStore> {
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    return new TenantStore(this.env.TENANTS, ring, this.keys, this.origins, 0);
  }
}
