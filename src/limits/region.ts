/**
 * Which regional lease broker a request's isolate uses: the Durable Object
 * location hint nearest to the data center that runs it, from the request's
 * `cf` object (continent, country, longitude of the data center's city), and,
 * once its tenant's brokers split (objects/broker/broker-shards.ts), the shard its data
 * center uses.
 */

import { fnv1a } from '../hash';
import type { BrokerRegion } from '../objects/broker/lease-broker';

/** Middle East countries Cloudflare's `me` hint serves (ISO 3166 alpha-2). */
const MIDDLE_EAST = new Set([
  'AE',
  'BH',
  'CY',
  'EG',
  'IL',
  'IQ',
  'IR',
  'JO',
  'KW',
  'LB',
  'OM',
  'PS',
  'QA',
  'SA',
  'SY',
  'TR',
  'YE',
]);

/** Longitude east of which North America is "western" (about the Rockies). */
const WEST_NORTH_AMERICA = -100;
/** Longitude east of which Europe is "eastern". */
const EAST_EUROPE = 20;

/** The broker region for a request; `enam` when the request says nothing of where it is. */
export function regionOf(cf: Request['cf']): BrokerRegion {
  const continent = typeof cf?.continent === 'string' ? cf.continent : '';
  const country = typeof cf?.country === 'string' ? cf.country : '';
  const longitude = Number(cf?.longitude);
  if (MIDDLE_EAST.has(country)) return 'me';
  switch (continent) {
    case 'NA':
      return Number.isFinite(longitude) && longitude < WEST_NORTH_AMERICA ? 'wnam' : 'enam';
    case 'SA':
      return 'sam';
    case 'EU':
      return Number.isFinite(longitude) && longitude > EAST_EUROPE ? 'eeur' : 'weur';
    case 'AF':
      return 'afr';
    case 'OC':
    case 'AN':
      return 'oc';
    case 'AS':
      return 'apac';
    default:
      return 'enam';
  }
}

/**
 * How long isolates ask the root directly after a broker said it only passes their
 * calls on (exact mode, small meters), before asking it again: limits
 * may have changed since.
 */
export const DIRECT_FOR_MS = 60_000;

/** The shard a data center uses: FNV-1a of its name (colo), modulo the count. */
export function shardOf(place: string, shards: number): number {
  return shards <= 1 ? 0 : fnv1a(place) % shards;
}
