/**
 * The simulated fleet: 300 data centers in nine regions (Cloudflare's
 * Durable Object location hints), each with its round trip to the tenant's
 * root TenantGuard (placed in enam, as the first caller of a US tenant would
 * place it) and to its region's broker. The figures are a table, not
 * measurements: typical public round trips between those places.
 */

export type Region = 'enam' | 'wnam' | 'sam' | 'weur' | 'eeur' | 'me' | 'afr' | 'apac' | 'oc';

interface RegionRow {
  region: Region;
  /** Data centers in the region. */
  count: number;
  /** Round trip from its data centers to the root guard, lowest and highest, ms. */
  toRoot: [number, number];
}

/** 300 data centers; the guard lives in enam. */
const REGIONS: RegionRow[] = [
  { region: 'enam', count: 40, toRoot: [2, 40] },
  { region: 'wnam', count: 30, toRoot: [40, 80] },
  { region: 'sam', count: 25, toRoot: [100, 180] },
  { region: 'weur', count: 50, toRoot: [70, 110] },
  { region: 'eeur', count: 30, toRoot: [100, 150] },
  { region: 'me', count: 15, toRoot: [150, 220] },
  { region: 'afr', count: 20, toRoot: [180, 300] },
  { region: 'apac', count: 75, toRoot: [150, 280] },
  { region: 'oc', count: 15, toRoot: [200, 260] },
];

/** Round trip from a data center to its region's broker, lowest and highest, ms. */
const TO_BROKER: [number, number] = [2, 40];

export interface DataCenter {
  index: number;
  region: Region;
  /** Round trip to the root guard, ms. */
  rootRtt: number;
  /** Round trip to its region's broker, ms. */
  brokerRtt: number;
}

export interface RegionInfo {
  region: Region;
  /** Round trip from the region's broker to the root guard: the region's nearest data center's. */
  rootRtt: number;
}

/** The data centers, spread evenly over each region's range (deterministic). */
export function dataCenters(): DataCenter[] {
  const out: DataCenter[] = [];
  for (const row of REGIONS) {
    for (let i = 0; i < row.count; i++) {
      const f = row.count === 1 ? 0 : i / (row.count - 1);
      out.push({
        index: out.length,
        region: row.region,
        rootRtt: Math.round(row.toRoot[0] + f * (row.toRoot[1] - row.toRoot[0])),
        brokerRtt: Math.round(
          TO_BROKER[0] + (((i * 7) % row.count) / row.count) * (TO_BROKER[1] - TO_BROKER[0]),
        ),
      });
    }
  }
  return out;
}

export function regions(): RegionInfo[] {
  return REGIONS.map((r) => ({ region: r.region, rootRtt: r.toRoot[0] }));
}

/** Isolates serving one tenant in a data center: one per 25 requests a second, 1 to 16. */
export function isolatesFor(requestsPerSecond: number): number {
  return Math.min(16, Math.max(1, Math.ceil(requestsPerSecond / 25)));
}

/** mulberry32: a small seeded generator, so every run is the same run. */
export function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
