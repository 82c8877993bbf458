/**
 * `npm run smoke` (scripts/smoke.ts) against a real local gateway: the
 * production bundle that `npm run deploy:check` builds (test/deploy/wrangler.toml,
 * --env production), on plain workerd (scripts/workerd-host.ts, free ports),
 * in front of the platform emulator, with a tenant made through the operator API.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const ORIGIN = 'https://app.example.com';

let emulator: RunningEmulator;
let gateway: GatewayHost;
let token: string;
let bundleDir: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(script: string, args: string[], env: Record<string, string | undefined>) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const k of Object.keys(childEnv)) if (childEnv[k] === undefined) delete childEnv[k];
  return new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      [TSX, script, ...args],
      { cwd: ROOT, env: childEnv, timeout: 90_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const smoke = (env: Record<string, string | undefined>, url = gateway.url) =>
  run('scripts/smoke.ts', [url], { SMOKE_TOKEN: undefined, SMOKE_ORIGIN: undefined, ...env });

async function admin(method: string, urlPath: string, body: unknown) {
  const res = await fetch(`${gateway.url}/admin${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const envelope = (await res.json()) as { code: number; data: any };
  expect(envelope.code, JSON.stringify(envelope)).toBe(0);
  return envelope.data;
}

beforeAll(async () => {
  // The production build, exactly as CI checks it (checks, then wrangler deploy --dry-run).
  bundleDir = mkdtempSync(path.join(os.tmpdir(), 'smoke-bundle-'));
  const built = await run(
    'scripts/deploy.ts',
    [
      '--dry-run',
      '--env',
      'production',
      '--config',
      'test/deploy/wrangler.toml',
      '--outdir',
      bundleDir,
    ],
    { WRANGLER_HIDE_BANNER: 'true', DEPLOY_WRANGLER_BIN: undefined },
  );
  expect(built.code, built.stdout + built.stderr).toBe(0);
  emulator = await startEmulator({ port: 0 });
  gateway = await startGateway({
    platformBaseUrl: emulator.url,
    bundle: {
      dir: bundleDir,
      main: path.join(bundleDir, 'index.js'),
      remove: () => rmSync(bundleDir, { recursive: true, force: true }),
    },
  });
  const created = await admin('POST', '/tenants', {
    name: 'Smoke test',
    platform_key: DEMO_PLATFORM_KEY,
    token: { name: 'smoke', scopes: ['read-only'] },
  });
  token = created.token;
  await admin('PATCH', `/tenants/${created.tenant_id}`, { cors_origins: [ORIGIN] });
});

afterAll(async () => {
  await gateway?.stop();
  await emulator?.close();
  rmSync(bundleDir, { recursive: true, force: true });
});

const lines = (r: Run) => r.stdout.split('\n').filter((l) => /^(PASS|FAIL|SKIP) {2}/.test(l));

describe('npm run smoke', () => {
  it('passes every check against a working gateway, and never prints the token', async () => {
    const r = await smoke({ SMOKE_TOKEN: token, SMOKE_ORIGIN: ORIGIN });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const got = lines(r);
    expect(got.map((l) => l.slice(0, 4))).toEqual(['PASS', 'PASS', 'PASS', 'PASS', 'PASS']);
    expect(got[0]).toMatch(/^PASS {2}healthz: HTTP 200, code 0, \d+ ms$/);
    expect(got[1]).toMatch(
      /^PASS {2}cached read: GET \/team\/lists\?page_size=([1-9]\d?|100): MISS \d+ ms, then HIT \d+ ms$/,
    );
    expect(got[2]).toMatch(/^PASS {2}rate limits: RateLimit-Policy: "burst";q=\d+;w=\d+/);
    expect(got[3]).toMatch(
      /^PASS {2}bad input: \?page_size=500: HTTP 400, code 40001, request id [0-9a-f-]{36}$/,
    );
    expect(got[4]).toBe(
      `PASS  cors: preflight from ${ORIGIN}: 204, Access-Control-Allow-Origin ${ORIGIN}`,
    );
    expect(r.stdout).toContain('All checks passed.');
    expect(r.stdout + r.stderr).not.toContain(token);
  });

  it('skips the CORS check without SMOKE_ORIGIN, and fails it for an origin the tenant does not allow', async () => {
    const skipped = await smoke({ SMOKE_TOKEN: token });
    expect(skipped.code).toBe(0);
    expect(lines(skipped)[4]).toBe('SKIP  cors: set SMOKE_ORIGIN to an origin the tenant allows');
    const refused = await smoke({ SMOKE_TOKEN: token, SMOKE_ORIGIN: 'https://other.example.com' });
    expect(refused.code).toBe(1);
    expect(lines(refused)[4]).toMatch(
      /^FAIL {2}cors: preflight from https:\/\/other\.example\.com: want 204 and Access-Control-Allow-Origin https:\/\/other\.example\.com; got HTTP 403, code 40301 ".+", Access-Control-Allow-Origin \(none\)$/,
    );
    expect(refused.stdout).toContain('1 check failed.');
  });

  it('fails (exit 1) with a token the gateway does not know, without printing it', async () => {
    const bogus = `apgw_${'x'.repeat(36)}`;
    const r = await smoke({ SMOKE_TOKEN: bogus });
    expect(r.code).toBe(1);
    const got = lines(r);
    expect(got[0]!.startsWith('PASS  healthz')).toBe(true);
    expect(got[1]).toMatch(
      /^FAIL {2}cached read: GET \/team\/lists\?page_size=\d+: want HTTP 200, code 0; got HTTP 401, code 401\d\d/,
    );
    expect(got[2]).toBe('SKIP  rate limits: no successful read to look at');
    expect(got[3]).toMatch(/^FAIL {2}bad input: .*got HTTP 401/);
    expect(r.stdout + r.stderr).not.toContain(bogus);
  });

  it('fails every check when nothing answers, and refuses to run without a token', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const down = await smoke({ SMOKE_TOKEN: token }, `http://127.0.0.1:${closed}`);
    expect(down.code).toBe(1);
    expect(lines(down).map((l) => l.slice(0, 4))).toEqual(['FAIL', 'FAIL', 'SKIP', 'FAIL', 'SKIP']);
    expect(lines(down)[0]).toBe('FAIL  healthz: fetch failed (ECONNREFUSED)');
    const usage = await smoke({});
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('SMOKE_TOKEN is not set');
  });
});
