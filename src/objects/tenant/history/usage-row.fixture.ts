/** A usage batch's row, as an isolate hands it over, for the guard's unit tests. */
import type { UsageRow } from '../../../metering/usage';

/** `requests` of `tok_a` on `team.list` in `hour`, all in the first latency bucket. */
export function usageRow(hour: number, status: UsageRow['status'], requests: number): UsageRow {
  return {
    hour,
    tokenId: 'tok_a',
    route: 'team.list',
    status,
    requests,
    units: requests,
    latency: [requests],
  };
}
