/**
 * The first cache tier: this isolate's memory, least recently used first out,
 * bounded in bytes. It answers a hit without a Cache API call, and it is the
 * only tier where the Cache API does nothing (`*.workers.dev`).
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

export class ByteLru {
  private readonly entries = new Map<string, L1Entry>();
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

  /** Changes the bound (the L1_CACHE_BYTES setting), evicting down to it; same bound, no work. */
  resize(maxBytes: number): void {
    if (maxBytes === this.bound) return;
    this.bound = maxBytes;
    this.evict();
  }

  get(key: string): L1Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Maps keep insertion order: re-inserting makes this the most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: L1Entry): void {
    this.delete(key);
    const size = sizeOf(key, entry);
    if (entry.body.byteLength > L1_MAX_ENTRY_BYTES || size > this.bound) return;
    this.entries.set(key, entry);
    this.used += size;
    this.evict();
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.used -= sizeOf(key, entry);
  }

  private evict(): void {
    for (const [key] of this.entries) {
      if (this.used <= this.bound) return;
      this.delete(key);
    }
  }
}

/** What an entry costs: its body, its key (UTF-16 in memory) and a little bookkeeping. */
function sizeOf(key: string, entry: L1Entry): number {
  return entry.body.byteLength + key.length * 2 + 64;
}
