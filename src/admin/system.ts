/** Operator API about itself (system.contract.ts): who calls, this isolate's counters, its contract. */
import { l1Stats } from '../cache/read-through';
import { GatewayError } from '../errors';
import { isolateCounters } from '../stats';
import { breakerStates } from '../upstream/resilient';
import { adminDocument } from './document';
import { type AdminApp, handle } from './handle';
import * as contract from './system.contract';

export function systemRoutes(app: AdminApp): void {
  // Who the caller is, for the console: what it shows and which controls; and the
  // settings its forms explain (local webhook targets are allowed only in development).
  handle(app, contract.whoami, async (c) => {
    const operator = c.get('operator');
    // adminAuth sets it before any handler runs.
    if (!operator) throw new GatewayError('ADMIN_UNAUTHORIZED');
    const { actor, role, via } = operator;
    const settings = c.get('settings');
    return {
      actor,
      role,
      via,
      settings: { webhook_local_targets: settings.WEBHOOK_LOCAL_TARGETS },
    };
  });
  // This isolate's work counters, for the benchmark and for operators (docs/OBSERVABILITY.md, "Work counters").
  handle(app, contract.isolateStats, async () => ({
    isolate: { ...isolateCounters, l1: l1Stats(), breakers: breakerStates() },
  }));
  // The operator API's own contract (partners get /openapi.json).
  handle(app, contract.adminOpenApi, async () => adminDocument());
}
