/**
 * The fleet as a file through the operator CLI against real local stacks (wrangler dev +
 * emulator): a 50-tenant file synced, `config dump | config diff` quiet then 1 after an
 * edit, a sealed backup restored in one command into a fresh, empty gateway where every
 * token answers as before, and a gateway with another KEY_ENCRYPTION_KEY naming each
 * token to re-issue. Timings: `npm run bench:config` (docs/CONFIG-AS-CODE.md).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { fleetOf } from '../../scripts/bench/fleet-file';
import type { Stack } from '../../scripts/stack';
import { fleetToYaml } from '../../ui/lib/fleet-yaml';
import { freshStack } from './fresh-stack';

const run = promisify(execFile);
const DIR = '.wrangler/config-cli-test';
const TENANTS = 50;
const BACKUP_KEY = 'a backup passphrase kept apart';
let source: Stack;
let restored: Stack | undefined;
let elsewhere: Stack | undefined;

beforeAll(async () => {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  source = await freshStack(`${DIR}/source-state`);
});
afterAll(async () => {
  await Promise.all([source?.stop(), restored?.stop(), elsewhere?.stop()]);
});

async function cli(stack: Stack, ...args: string[]) {
  const env = {
    ...process.env,
    ADMIN_TOKEN: stack.adminToken,
    PARTNER_KEY: DEMO_PLATFORM_KEY,
    CONFIG_BACKUP_KEY: BACKUP_KEY,
  };
  try {
    const { stdout, stderr } = await run(
      'tsx',
      ['scripts/admin.ts', '--url', stack.gatewayUrl, ...args],
      {
        env,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The secrets a sync printed, by `tenant/token` ref. */
function tokensPrinted(stdout: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of stdout.matchAll(/token (\S+) \(tok_\w+\): (apgw_\w+)/g)) found.set(m[1]!, m[2]!);
  return found;
}

const answers = (stack: Stack, token: string) =>
  fetch(`${stack.gatewayUrl}/token`, { headers: { authorization: `Bearer ${token}` } }).then(
    (r) => r.status,
  );

describe('config through the CLI', () => {
  let secrets = new Map<string, string>();

  it(`syncs a ${TENANTS}-tenant file, and dump | diff is quiet until an edit`, async () => {
    writeFileSync(`${DIR}/fleet.yaml`, fleetToYaml(fleetOf(TENANTS, 'PARTNER_KEY')));
    const synced = await cli(source, 'config', 'sync', `${DIR}/fleet.yaml`);
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stdout).toMatch(new RegExp(`0 rename\\(s\\), ${2 + TENANTS + 75} create\\(s\\)`));
    secrets = tokensPrinted(synced.stdout);
    expect(secrets.size).toBe(75);
    expect(synced.stdout).not.toContain(DEMO_PLATFORM_KEY);

    const dumped = await cli(source, 'config', 'dump', '--out', `${DIR}/dumped.yaml`);
    expect(dumped.code, dumped.stderr).toBe(0);
    const text = readFileSync(`${DIR}/dumped.yaml`, 'utf8');
    expect(text).toContain('platform_key_ref: env:PARTNER_KEY');
    expect(text).not.toContain(DEMO_PLATFORM_KEY);
    for (const secret of secrets.values()) expect(text).not.toContain(secret);
    const quiet = await cli(source, 'config', 'diff', `${DIR}/dumped.yaml`);
    expect(quiet.code, quiet.stdout + quiet.stderr).toBe(0);
    expect(quiet.stdout).toContain('No differences');

    const list = await cli(source, 'tenant', 'list', '--page-size', '100', '--json');
    const partner = (
      JSON.parse(list.stdout) as { tenants: { id: string; name: string }[] }
    ).tenants.find((t) => t.name === 'Partner 007')!;
    expect(
      (await cli(source, 'tenant', 'update', partner.id, '--name', 'Partner 007 (edited)')).code,
    ).toBe(0);
    const drift = await cli(source, 'config', 'diff', `${DIR}/dumped.yaml`);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(`> rename tenant partner-007 (${partner.id})`);
    expect(drift.stdout).toContain('name: "Partner 007 (edited)" -> "Partner 007"');
    expect(drift.stdout).toMatch(/1 rename\(s\), 0 create\(s\), 0 update\(s\), 0 delete\(s\)/);
    expect((await cli(source, 'config', 'sync', `${DIR}/dumped.yaml`)).code).toBe(0);
  });

  it('refuses a bad file whole, each problem by its path, exit 2', async () => {
    writeFileSync(
      `${DIR}/bad.yaml`,
      'version: 1\ntenants:\n  - ref: a\n    name: A\n    platform_key_ref: env:NOT_SET\n    plan: nope\n  - ref: a\n    name: B\n    platform_key_ref: keep\n',
    );
    const bad = await cli(source, 'config', 'diff', `${DIR}/bad.yaml`);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('tenants[0].plan: there is no plan with ref nope');
    expect(bad.stderr).toContain('tenants[1].ref: ref a is given twice');
    expect(bad.stderr).toContain('tenants[0].platform_key_ref: env:NOT_SET was not given');
  });

  it('restores a sealed backup into a fresh, empty gateway in one command: every token answers', async () => {
    const sealed = await cli(source, 'config', 'dump', '--sealed', '--out', `${DIR}/fleet.sealed`);
    expect(sealed.code, sealed.stderr).toBe(0);
    const archive = readFileSync(`${DIR}/fleet.sealed`, 'utf8');
    expect(archive).not.toContain(DEMO_PLATFORM_KEY);
    expect(archive).not.toContain('Partner 001');

    restored = await freshStack(`${DIR}/restored-state`);
    const restore = await cli(restored, 'config', 'sync', `${DIR}/fleet.sealed`);
    expect(restore.code, restore.stdout + restore.stderr).toBe(0);
    expect(restore.stdout).not.toContain('apgw_');
    for (const [ref, token] of secrets) expect(await answers(restored, token), ref).toBe(200);
    // The same file, from the restored gateway.
    const again = await cli(restored, 'config', 'diff', `${DIR}/dumped.yaml`);
    expect(again.code, again.stdout).toBe(0);
  });

  it('names each token to re-issue where the gateway has another KEY_ENCRYPTION_KEY', async () => {
    elsewhere = await freshStack(`${DIR}/elsewhere-state`, {
      KEY_ENCRYPTION_KEY: `local1:${randomBytes(32).toString('base64')}`,
    });
    const diff = await cli(elsewhere, 'config', 'diff', `${DIR}/fleet.sealed`);
    expect(diff.code).toBe(1);
    const reissued = diff.stdout.split('\n').filter((l) => l.includes('[reissued]'));
    expect(reissued).toHaveLength(75);
    expect(diff.stdout).toContain('KEY_ENCRYPTION_KEY entry local1');
  });
});
