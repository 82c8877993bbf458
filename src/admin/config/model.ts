/**
 * The fleet as the gateway holds it, in the fleet file's terms (config-file.ts) plus the
 * ids and fingerprints a plan needs: what the reader makes (read.ts), the planner
 * compares (plan.ts) and a dump writes (`fileOf`, secret-free). Pure: unit-tested on Node.
 */
import type { FleetFile, PlanEntry, TenantEntry, TokenEntryOf } from '../config-file';
import { CONFIG_FILE_VERSION } from '../config-file';

export interface LiveToken extends TokenEntryOf {
  /** The working token heading its family (what the file's entry is). */
  id: string;
  family_id: string;
  tag_kid: string | null;
}

export interface LiveTenant extends Omit<TenantEntry, 'tokens'> {
  id: string;
  /** The SHA-256 (hex) of its platform key: compared, never shown whole. */
  key_fingerprint: string;
  tokens: LiveToken[];
}

export interface LivePlan extends PlanEntry {
  /** Every tenant on it (selected or not): a rename moves them, a delete needs none. */
  members: string[];
}

export interface LiveFleet {
  plans: LivePlan[];
  /** The tenants read whole: all of them, or those a selection reaches. */
  tenants: LiveTenant[];
}

/** Objects in the order a dump writes them (and a plan deletes them): by ref. */
export const byRef = <T extends { ref: string }>(a: T, b: T) =>
  a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0;

/** The file a dump writes: every field written out, objects by ref, never a secret. */
export function fileOf(live: LiveFleet): FleetFile {
  return {
    version: CONFIG_FILE_VERSION,
    plans: [...live.plans].sort(byRef).map(({ members: _members, ...plan }) => plan),
    tenants: [...live.tenants].sort(byRef).map((tenant) => {
      const { id: _id, key_fingerprint: _fingerprint, tokens, ...entry } = tenant;
      return {
        ...entry,
        tokens: [...tokens]
          .sort(byRef)
          .map(({ id: _t, family_id: _f, tag_kid: _k, ...token }) => token),
      };
    }),
  };
}

/** JSON with keys in order, so equal values give equal text (hashes, comparisons). */
export function canonical(value: unknown): string {
  return JSON.stringify(sortedKeys(value));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortedKeys(v);
    }
    return out;
  }
  return value;
}

export const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);
