/**
 * The first cache tier: this isolate's memory, least recently used first out,
 * bounded in bytes. It answers a hit without a Cache API call, and it is the
 * only tier where the Cache API does nothing (`*.workers.dev`).
 *
 * Each entry has an owner (the platform key whose answer it is), and no owner
 * can crowd the others out (docs/RESILIENCE.md, "What tenants share"): an
 * owner holding more than an even share of the bound (the bound over the
 * owners with entries) makes room by dropping its own least recently used
 * entries. Only an owner under its share evicts the isolate's least recently
 * used entry, whoever's it is.
 */
import type { Bytes } from '../bytes';

/** Entries larger than this stay out of memory (they still go to the Cache API). */
export const L1_MAX_ENTRY_BYTES = 256 * 1024;

export interface L1Entry {
  /** The body exactly as the platform sent it (secrets already masked). */
  body: Bytes;
  /** When the platform answered, ms since the epoch. */
  storedAt: number;
}

interface Owner {
  id: string;
  bytes: number;
  /** Its entries' keys, least recently used first. */
  keys: Set<string>;
}

interface Slot {
  entry: L1Entry;
  owner: Owner;
  size: number;
}

export class ByteLru {
  private readonly entries = new Map<string, Slot>();
  private readonly owners = new Map<string, Owner>();
  private used = 0;

  constructor(private bound: number) {}

  /** Bytes held now (bodies plus keys). */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The most bytes it holds. */
  get maxBytes(): number {
    return this.bound;
  }

  /** Bytes one owner holds now. */
  bytesOf(owner: string): number {
    return this.owners.get(owner)?.bytes ?? 0;
  }

  /** Changes the bound (the L1_CACHE_BYTES setting), evicting down to it; same bound, no work. */
  resize(maxBytes: number): void {
    if (maxBytes === this.bound) return;
    this.bound = maxBytes;
    this.evict(null);
  }

  get(key: string): L1Entry | undefined {
    const slot = this.entries.get(key);
    if (!slot) return undefined;
    // Maps and Sets keep insertion order: re-inserting makes this the most recently used.
    this.entries.delete(key);
    this.entries.set(key, slot);
    slot.owner.keys.delete(key);
    slot.owner.keys.add(key);
    return slot.entry;
  }

  set(key: string, entry: L1Entry, ownerId: string): void {
    this.delete(key);
    const size = sizeOf(key, entry);
    if (entry.body.byteLength > L1_MAX_ENTRY_BYTES || size > this.bound) return;
    let owner = this.owners.get(ownerId);
    if (!owner) {
      owner = { id: ownerId, bytes: 0, keys: new Set() };
      this.owners.set(ownerId, owner);
    }
    this.entries.set(key, { entry, owner, size });
    owner.keys.add(key);
    owner.bytes += size;
    this.used += size;
    this.evict(owner);
  }

  delete(key: string): void {
    const slot = this.entries.get(key);
    if (!slot) return;
    this.entries.delete(key);
    this.used -= slot.size;
    const { owner } = slot;
    owner.keys.delete(key);
    owner.bytes -= slot.size;
    if (owner.keys.size === 0) this.owners.delete(owner.id);
  }

  /** Down to the bound: from the owner that just stored, if it is over its share; else the LRU. */
  private evict(storing: Owner | null): void {
    while (this.used > this.bound) {
      const share = this.bound / this.owners.size;
      const own = storing !== null && storing.bytes > share;
      const victim = own ? storing.keys.values().next().value : this.entries.keys().next().value;
      if (victim === undefined) return;
      this.delete(victim);
    }
  }
}

/** What an entry costs: its body, its key (UTF-16 in memory) and a little bookkeeping. */
function sizeOf(key: string, entry: L1Entry): number {
  return entry.body.byteLength + key.length * 2 + 64;
}
