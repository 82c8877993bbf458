/**
 * `npm run sim`: the fleet simulation (scripts/sim/, docs/LIMITS.md). Runs
 * every scenario on today's flat design and with regional brokers, prints
 * the table (Markdown) and lease memory per isolate, and writes the chart to
 * docs/img/sim.svg. `--quick` shortens the runs (not for the record),
 * `--only <scenario>` runs one, `--design flat|regional` one design,
 * `--skip <scenario>` leaves one out (repeatable), `--json` prints one JSON line per run
 * as well, `--seed <n>` draws other arrivals (the chart is written for the default
 * seed only).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Design, runScenario, SEED } from './sim/fleet';
import { leaseBytesPerTenant } from './sim/memory';
import { chartSvg, markdownTable, type Row, row } from './sim/report';
import { scenarios } from './sim/scenarios';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    skip: { type: 'string', multiple: true, default: [] },
    design: { type: 'string' },
    json: { type: 'boolean', default: false },
    chart: { type: 'string', default: 'docs/img/sim.svg' },
    seed: { type: 'string' },
  },
});
const seed = values.seed === undefined ? SEED : Number(values.seed);
if (!Number.isInteger(seed)) throw new Error(`--seed takes an integer, not ${values.seed}`);
const designs: Design[] =
  values.design === 'flat' || values.design === 'regional' ? [values.design] : ['flat', 'regional'];
const rows: Row[] = [];
for (const scenario of scenarios(values.quick ?? false)) {
  if (values.only && scenario.name !== values.only) continue;
  if (values.skip?.includes(scenario.name)) continue;
  for (const design of designs) {
    const r = row(await runScenario(scenario, design, seed));
    rows.push(r);
    if (values.json) console.log(JSON.stringify(r));
    else console.error(`${r.scenario} (${r.design}) done`);
  }
}
console.log(markdownTable(rows));
const bytes = await leaseBytesPerTenant(10_000);
console.log(
  `\nLease memory per isolate at 10,000 tenants: ${(bytes / 1024).toFixed(1)} KiB a tenant, ` +
    `${((bytes * 10_000) / 1024 / 1024).toFixed(1)} MiB in all.`,
);
if (!values.only && !values.design && !values.quick && seed === SEED && values.chart) {
  writeFileSync(values.chart, chartSvg(rows));
  console.log(`Chart: ${values.chart}`);
}
