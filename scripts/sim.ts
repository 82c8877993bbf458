/**
 * `npm run sim`: the fleet simulation (scripts/sim/). Runs every scenario on
 * each design and prints the table; `--quick` halves the durations, `--only
 * <name>` runs one scenario, `--design flat|regional` one design.
 */
import { parseArgs } from 'node:util';
import { type Design, runScenario } from './sim/fleet';
import { scenarios } from './sim/scenarios';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    design: { type: 'string' },
  },
});
const designs: Design[] = values.design ? [values.design as Design] : ['flat', 'regional'];
for (const scenario of scenarios(values.quick ?? false)) {
  if (values.only && scenario.name !== values.only) continue;
  for (const design of designs) {
    const r = await runScenario(scenario, design);
    const t = r.tally;
    const worst = r.tenants.reduce((a, b) => (b.busiest / b.limit > a.busiest / a.limit ? b : a));
    console.log(
      JSON.stringify({
        scenario: r.scenario,
        design,
        requests: t.requests,
        admitted: t.admitted,
        refused: t.refused,
        unavailable: t.unavailable,
        busiestVsLimit: `${worst.busiest}/${worst.limit}`,
        delivered: `${worst.busiestDelivered}/${worst.limit}`,
        utilisation: r.tenants.map((x) => x.utilisation).filter((u) => u !== null),
        waited: t.waits.filter((w) => w > 0).length / t.measured,
        waitedRoot: t.waitedForRoot / t.measured,
        rootCallsPerRequest: r.rootCallsPerRequest,
        callsPerRequest: r.callsPerRequest,
        busiestObject: r.busiestObject,
        lag: r.tenants.map((x) => x.actionLagMs),
        wallMs: Math.round(r.wallMs),
      }),
    );
  }
}
