/**
 * `npm run bench:config [-- --tenants N]`: how long the fleet file takes on the local
 * stack (wrangler dev + emulator, fresh state): the plan and the apply of an N-tenant
 * file (default 50) into an empty gateway, a plan of the same file once applied (the
 * drift check), a sealed backup, and its restore (plan and apply) into a second, empty
 * gateway. Each figure is one run's wall time as the operator sees it (the CLI's calls);
 * docs/CONFIG-AS-CODE.md quotes them.
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { adminClient } from '../../ui/lib/admin-client';
import { freePort } from '../free-port';
import { type Stack, startStack } from '../stack';
import { fleetOf } from './fleet-file';

const { values } = parseArgs({ options: { tenants: { type: 'string', default: '50' } } });
const tenants = Number(values.tenants);
const BACKUP_KEY = 'a benchmark passphrase';

async function fresh(dir: string): Promise<Stack> {
  rmSync(dir, { recursive: true, force: true });
  return startStack({
    gatewayPort: await freePort(),
    emulatorPort: await freePort(),
    persistTo: dir,
    quiet: true,
  });
}

const timed = async <T>(
  what: string,
  rows: [string, number][],
  work: () => Promise<T>,
): Promise<T> => {
  const started = performance.now();
  const out = await work();
  rows.push([what, performance.now() - started]);
  return out;
};

async function envelopeOf<T>(res: { status: number; json(): Promise<unknown> }): Promise<T> {
  const body = (await res.json()) as { code: number; msg: string; data: T };
  if (body.code !== 0) throw new Error(`HTTP ${res.status}: ${body.msg}`);
  return body.data;
}

const rows: [string, number][] = [];
const source = await fresh('.wrangler/bench-config-source');
let target: Stack | undefined;
try {
  const admin = adminClient(source.gatewayUrl, {
    headers: { authorization: `Bearer ${source.adminToken}` },
  });
  const body = {
    config: fleetOf(tenants, 'K') as Record<string, unknown>,
    platform_keys: { K: DEMO_PLATFORM_KEY },
  };
  const planned = await timed(`plan, ${tenants} tenants into an empty gateway`, rows, async () =>
    envelopeOf<{ hash: string; changes: unknown[] }>(await admin.config.plan.$post({ json: body })),
  );
  await timed(`apply (${planned.changes.length} changes)`, rows, async () =>
    envelopeOf(
      await admin.config.apply.$post(
        { json: body },
        { headers: { 'if-match': `"${planned.hash}"` } },
      ),
    ),
  );
  const quiet = await timed('plan again (drift check, no change)', rows, async () =>
    envelopeOf<{ changes: unknown[] }>(await admin.config.plan.$post({ json: body })),
  );
  if (quiet.changes.length !== 0) throw new Error('the applied fleet still differs from its file');
  // Every tenant changed: one more origin each.
  const edited = fleetOf(tenants, 'K');
  for (const t of edited.tenants ?? [])
    t.cors_origins = [...(t.cors_origins ?? []), 'https://new.example'];
  const editedBody = { ...body, config: edited as Record<string, unknown> };
  const editPlan = await timed(`plan, every one of ${tenants} tenants changed`, rows, async () =>
    envelopeOf<{ hash: string; changes: unknown[] }>(
      await admin.config.plan.$post({ json: editedBody }),
    ),
  );
  await timed(`apply (${editPlan.changes.length} changes)`, rows, async () =>
    envelopeOf(
      await admin.config.apply.$post(
        { json: editedBody },
        { headers: { 'if-match': `"${editPlan.hash}"` } },
      ),
    ),
  );
  const sealed = await timed('sealed backup (config dump --sealed)', rows, async () =>
    envelopeOf<{ archive: string }>(
      await admin.config.backup.$post({ json: { archive_key: BACKUP_KEY } }),
    ),
  );
  target = await fresh('.wrangler/bench-config-target');
  const restore = { archive: sealed.archive, archive_key: BACKUP_KEY };
  const into = adminClient(target.gatewayUrl, {
    headers: { authorization: `Bearer ${target.adminToken}` },
  });
  const restorePlan = await timed('restore: plan, into an empty gateway', rows, async () =>
    envelopeOf<{ hash: string }>(await into.config.plan.$post({ json: restore })),
  );
  await timed('restore: apply', rows, async () =>
    envelopeOf(
      await into.config.apply.$post(
        { json: restore },
        { headers: { 'if-match': `"${restorePlan.hash}"` } },
      ),
    ),
  );
  const total = rows.slice(-2).reduce((s, [, ms]) => s + ms, 0);
  rows.push(['restore in all (config sync FILE.sealed)', total]);
  console.log(`Fleet file, ${tenants} tenants (local stack: wrangler dev + emulator)`);
  for (const [what, ms] of rows)
    console.log(`  ${what.padEnd(48)} ${(ms / 1000).toFixed(2).padStart(7)} s`);
} finally {
  await Promise.all([source.stop(), target?.stop()]);
}
