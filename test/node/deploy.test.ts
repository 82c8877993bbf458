/**
 * `npm run deploy` (scripts/deploy.ts): the checks as pure functions, the
 * wrangler.toml editing, and the script end to end against temporary configs.
 * Nothing here reaches Cloudflare: account commands go to a stand-in for
 * wrangler (test/node/fixtures/fake-wrangler.mjs) that records every call,
 * and the dry runs use the real wrangler offline (no account command, a dead
 * proxy for anything that would try the network anyway).
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import {
  bindingNames,
  checkBundleSize,
  checkDeployConfig,
  checkDomain,
  checkPlatformUrl,
  checkRoute,
  type DeployConfig,
  isPrivateHost,
  varsNotInEnv,
} from '../../scripts/deploy/checks';
import { setTomlKey } from '../../scripts/deploy/toml';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const FAKE_WRANGLER = path.join(ROOT, 'test', 'node', 'fixtures', 'fake-wrangler.mjs');
const PLACEHOLDER = '00000000000000000000000000000000';
const KV_ID = '5c0ffee5c0ffee5c0ffee5c0ffee5c0f';

const good: DeployConfig = {
  vars: { PLATFORM_BASE_URL: 'https://platform.example.com' },
  kv_namespaces: [{ binding: 'TENANTS', id: KV_ID }],
  durable_objects: {
    bindings: [
      { name: 'TENANT_GUARD', class_name: 'TenantGuard' },
      { name: 'AUDIT_LOG', class_name: 'AuditLog' },
    ],
  },
  routes: [{ pattern: 'gw.example.com', custom_domain: true }],
};
const SECRETS = ['ADMIN_TOKEN', 'KEY_ENCRYPTION_KEY'];
const messages = (config: DeployConfig, secrets: string[] | null = SECRETS) =>
  checkDeployConfig(config, secrets).map((r) => r.message);

describe('checkDeployConfig', () => {
  it('passes a complete production config', () => {
    expect(checkDeployConfig(good, SECRETS)).toEqual([]);
    expect(checkDeployConfig(good, null)).toEqual([]);
    expect(checkDeployConfig({ ...good, routes: ['gw.example.com/*'] }, SECRETS)).toEqual([]);
  });

  it('refuses a loopback, private or plain-http upstream, one line each', () => {
    const withUrl = (url: unknown) => messages({ ...good, vars: { PLATFORM_BASE_URL: url } });
    expect(withUrl('http://127.0.0.1:8790')).toEqual([
      "PLATFORM_BASE_URL http://127.0.0.1:8790 is a loopback, private or local address: a deployed Worker cannot reach it; set the real platform's https URL",
    ]);
    for (const url of [
      'https://localhost',
      'https://api.localhost',
      'https://10.2.3.4',
      'https://172.20.0.1',
      'https://192.168.1.10',
      'https://169.254.169.254',
      'https://100.64.0.1',
      'https://0.0.0.0',
      'https://2130706433', // 127.0.0.1 as a number
      'https://[::1]',
      'https://[::ffff:127.0.0.1]',
      'https://[fd00::1]',
      'https://[fe80::1]',
      'https://platform.internal',
      'https://printer.local',
      'https://platform',
    ]) {
      expect(withUrl(url), url).toHaveLength(1);
      expect(withUrl(url)[0], url).toContain('is a loopback, private or local address');
    }
    expect(withUrl('http://platform.example.com')).toEqual([
      "PLATFORM_BASE_URL http://platform.example.com is not https: every tenant's platform key would cross the internet unencrypted",
    ]);
    expect(withUrl('')).toEqual([
      'PLATFORM_BASE_URL is not set: pass --platform-url https://platform.example.com (the real platform)',
    ]);
    expect(withUrl(undefined)).toHaveLength(1);
    expect(withUrl('platform.example.com')[0]).toContain('is not a URL');
    expect(withUrl('https://user:pw@platform.example.com')[0]).toContain('user name or password');
    for (const url of ['https://platform.example.com', 'https://172.32.0.1', 'https://8.8.8.8']) {
      expect(withUrl(url), url).toEqual([]);
    }
  });

  it('refuses a placeholder, missing or malformed KV namespace id', () => {
    expect(messages({ ...good, kv_namespaces: [{ binding: 'TENANTS', id: PLACEHOLDER }] })).toEqual(
      [
        `KV namespace TENANTS has the placeholder id ${PLACEHOLDER} in [env.production]: run \`npm run deploy -- --env production\` (without --dry-run) to create or reuse it, or write your namespace's id there`,
      ],
    );
    expect(messages({ ...good, kv_namespaces: [{ binding: 'TENANTS' }] })[0]).toMatch(
      /^KV namespace TENANTS has no id in \[env\.production\]/,
    );
    expect(messages({ ...good, kv_namespaces: [] })[0]).toMatch(
      /^KV namespace binding TENANTS is missing from \[env\.production\]/,
    );
    expect(
      messages({ ...good, kv_namespaces: [{ binding: 'TENANTS', id: 'my-ns' }] })[0],
    ).toContain('not a KV namespace id');
  });

  it('refuses missing secrets, naming them', () => {
    expect(messages(good, [])).toEqual([
      'secrets missing on the production Worker: ADMIN_TOKEN, KEY_ENCRYPTION_KEY; `npm run deploy -- --env production` generates and puts them (or `wrangler secret put <NAME> --env production`)',
    ]);
    expect(messages(good, ['ADMIN_TOKEN', 'OTHER'])[0]).toMatch(/missing .*: KEY_ENCRYPTION_KEY;/);
  });

  it('refuses no custom domain or route, and says why (the Cache API on workers.dev)', () => {
    const expected = [
      "no custom domain or route in [env.production]: the Cache API does nothing on *.workers.dev, so the gateway's second cache tier (L2, shared per data center) would be off; pass --domain gw.example.com or --route 'gw.example.com/*'",
    ];
    expect(messages({ ...good, routes: [] })).toEqual(expected);
    expect(messages({ ...good, routes: undefined })).toEqual(expected);
    expect(messages({ ...good, routes: ['gw.acme.workers.dev/*'] })).toEqual(expected);
  });

  it('refuses an environment without the Durable Object bindings', () => {
    expect(messages({ ...good, durable_objects: { bindings: [] } })).toEqual([
      'Durable Object binding TENANT_GUARD (class TenantGuard) is missing from [env.production]: wrangler does not inherit bindings into an environment',
      'Durable Object binding AUDIT_LOG (class AuditLog) is missing from [env.production]: wrangler does not inherit bindings into an environment',
    ]);
  });

  it('refuses an environment missing a binding the top level has (wrangler does not inherit them)', () => {
    const topLevel: DeployConfig = {
      ...good,
      ratelimits: [
        { name: 'PREAUTH_LIMITER', namespace_id: '1001', simple: { limit: 60, period: 60 } },
      ],
      services: [{ binding: 'AUTH', service: 'auth' }],
    };
    expect(checkDeployConfig(good, SECRETS, { topLevel }).map((r) => r.message)).toEqual([
      'binding PREAUTH_LIMITER (ratelimits) is in the top-level config but not in [env.production]: wrangler does not inherit bindings into an environment; add it there',
      'binding AUTH (services) is in the top-level config but not in [env.production]: wrangler does not inherit bindings into an environment; add it there',
    ]);
    expect(checkDeployConfig(topLevel, SECRETS, { topLevel })).toEqual([]);
    expect(varsNotInEnv({ vars: { A: '1', B: '2' } }, { vars: { A: '3' } })).toEqual(['B']);
  });

  it("wrangler.toml's [env.production] has every binding and var of its top level", () => {
    const config = path.join(ROOT, 'wrangler.toml');
    const topLevel = unstable_readConfig({ config });
    const production = unstable_readConfig({ config, env: 'production' });
    expect(bindingNames(production)).toEqual(bindingNames(topLevel));
    expect(bindingNames(production)).toContain('kv_namespaces TENANTS');
    expect(
      checkDeployConfig(production, null, { topLevel }).filter((r) => r.check === 'bindings'),
    ).toEqual([]);
    expect(varsNotInEnv(topLevel, production)).toEqual([]);
  });

  it('lists every problem at once, in a stable order', () => {
    const checks = checkDeployConfig({}, []).map((r) => r.check);
    expect(checks).toEqual([
      'platform_url',
      'kv_namespace',
      'bindings',
      'bindings',
      'secrets',
      'custom_domain',
    ]);
  });
});

describe('flag values and the bundle budget', () => {
  it('accepts host names for --domain and host/* for --route', () => {
    expect(checkDomain('gw.example.com')).toBeUndefined();
    expect(checkDomain('xn--bcher-kva.example')).toBeUndefined();
    for (const bad of [
      'https://gw.example.com',
      'gw.example.com/x',
      'gw.example.com:443',
      '*.a.b',
    ]) {
      expect(checkDomain(bad), bad).toMatch(/^--domain must be a host name/);
    }
    expect(checkDomain('gw.acme.workers.dev')).toContain('workers.dev, where the Cache API');
    expect(checkRoute('gw.example.com/*')).toBeUndefined();
    expect(checkRoute('*.example.com/*')).toBeUndefined();
    expect(checkRoute('example.com/api/*')).toContain('serves the platform');
    expect(checkRoute('gw.example.com')).toContain('must look like gw.example.com/*');
    expect(checkRoute('gw.acme.workers.dev/*')).toContain('workers.dev');
    expect(checkPlatformUrl('https://platform.example.com/v1')).toBeUndefined();
  });

  it('isPrivateHost takes hosts as URL writes them', () => {
    expect(isPrivateHost(new URL('https://[::ffff:10.0.0.1]').hostname)).toBe(true);
    expect(isPrivateHost(new URL('https://0x7f.1').hostname)).toBe(true);
    expect(isPrivateHost('platform.example.com')).toBe(false);
    expect(isPrivateHost('[2606:4700::1111]')).toBe(false);
  });

  it('checkBundleSize compares KiB of the uncompressed bundle', () => {
    expect(checkBundleSize(950 * 1024, 950)).toBeUndefined();
    expect(checkBundleSize(950 * 1024 + 1, 950)).toBe(
      'the bundle is 950.0 KiB, over the budget of 950 KiB (package.json "config": {"bundleBudgetKiB"})',
    );
  });

  it('the budget is a number in package.json', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.config.bundleBudgetKiB).toBeGreaterThan(0);
    expect(pkg.scripts['deploy:check']).toContain('--config test/deploy/wrangler.toml');
  });
});

describe('setTomlKey', () => {
  const text = [
    '[vars]',
    'A = "top"',
    '',
    '[env.production]',
    'workers_dev = false',
    'routes = [',
    '  "a.example.com/*",',
    ']',
    '# a comment that stays',
    '',
    '[env.production.vars]',
    'A = "old" # trailing comment',
    '',
    '[[env.production.kv_namespaces]]',
    'binding = "OTHER"',
    'id = "1"',
    '',
    '[[env.production.kv_namespaces]]',
    'binding = "TENANTS"',
    'id = "0"',
    '',
  ].join('\n');

  it('replaces a value in the named table only, keeping everything else', () => {
    const out = setTomlKey(text, 'env.production.vars', 'A', 'new');
    expect(out).toBe(text.replace('A = "old" # trailing comment', 'A = "new"'));
  });

  it('picks the array-of-tables entry by its binding', () => {
    const out = setTomlKey(text, 'env.production.kv_namespaces', 'id', KV_ID, {
      where: { key: 'binding', value: 'TENANTS' },
    });
    expect(out).toContain('binding = "OTHER"\nid = "1"');
    expect(out).toContain(`binding = "TENANTS"\nid = "${KV_ID}"`);
  });

  it('replaces a multi-line array whole, and adds missing keys and tables', () => {
    const out = setTomlKey(text, 'env.production', 'routes', [
      { pattern: 'gw.example.com', custom_domain: true },
    ]);
    expect(out).toContain(
      'workers_dev = false\nroutes = [{ pattern = "gw.example.com", custom_domain = true }]\n# a comment that stays',
    );
    const added = setTomlKey(text, 'env.production.vars', 'B', 'b');
    expect(added).toContain('A = "old" # trailing comment\nB = "b"\n');
    const table = setTomlKey(text, 'env.staging.vars', 'A', 'x');
    expect(table.endsWith('\n[env.staging.vars]\nA = "x"\n')).toBe(true);
  });
});

// --- End to end --------------------------------------------------------------------------

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A copy of wrangler.toml (as checked in) in a temp dir, `main` and the assets pointing back. */
function tempConfig(edit: (text: string) => string = (t) => t): {
  dir: string;
  config: string;
  state: string;
} {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'deploy-test-'));
  dirs.push(dir);
  const text = readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8')
    .replace(/^main = .*$/m, `main = ${JSON.stringify(path.join(ROOT, 'src', 'index.ts'))}`)
    .replace(
      /^directory = .*$/m,
      `directory = ${JSON.stringify(path.join(ROOT, 'build', 'assets'))}`,
    );
  const config = path.join(dir, 'wrangler.toml');
  writeFileSync(config, edit(text));
  const state = path.join(dir, 'fake-wrangler.json');
  writeFileSync(state, '{}');
  return { dir, config, state };
}

/** Fills [env.production] the way the deploy script would, or with the given values. */
function production(values: { url?: string; id?: string; domain?: string }) {
  return (text: string) => {
    let out = text;
    if (values.url) out = setTomlKey(out, 'env.production.vars', 'PLATFORM_BASE_URL', values.url);
    if (values.id)
      out = setTomlKey(out, 'env.production.kv_namespaces', 'id', values.id, {
        where: { key: 'binding', value: 'TENANTS' },
      });
    if (values.domain)
      out = setTomlKey(out, 'env.production', 'routes', [
        { pattern: values.domain, custom_domain: true },
      ]);
    return out;
  };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run deploy -- …` as an operator runs it (stdin not a terminal, so no prompts). */
function deploy(
  args: string[],
  opts: { state?: string; realWrangler?: boolean; env?: NodeJS.ProcessEnv } = {},
) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // With the real wrangler, anything that tried the network would fail fast, not reach Cloudflare.
    ...(opts.realWrangler
      ? { HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9' }
      : {}),
    WRANGLER_HIDE_BANNER: 'true',
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_API_TOKEN: '',
    DEPLOY_WRANGLER_BIN: opts.realWrangler ? undefined : FAKE_WRANGLER,
    FAKE_WRANGLER_STATE: opts.state,
    ...opts.env,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  return new Promise<Run>((resolve) => {
    const child = execFile(
      process.execPath,
      [TSX, 'scripts/deploy.ts', '--env', 'production', ...args],
      { cwd: ROOT, env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

const calls = (state: string): string[][] => JSON.parse(readFileSync(state, 'utf8')).calls ?? [];
const refusals = (run: Run) =>
  run.stderr
    .split('\n')
    .filter((l) => l.startsWith('deploy refused: '))
    .map((l) => l.slice('deploy refused: '.length));

describe('npm run deploy, refusing', () => {
  it('refuses a loopback upstream before any wrangler call', async () => {
    const t = tempConfig(production({ url: 'http://127.0.0.1:8790', domain: 'gw.example.com' }));
    const run = await deploy(['--config', t.config], { state: t.state });
    expect(run.code).toBe(1);
    expect(refusals(run)).toEqual([
      "PLATFORM_BASE_URL http://127.0.0.1:8790 is a loopback, private or local address: a deployed Worker cannot reach it; set the real platform's https URL",
    ]);
    expect(calls(t.state)).toEqual([]);
    expect(run.stdout).not.toContain('$ wrangler');
  });

  it('refuses a private --platform-url before writing it, and a plain-http one', async () => {
    const t = tempConfig(production({ domain: 'gw.example.com' }));
    const before = readFileSync(t.config, 'utf8');
    const run = await deploy(['--config', t.config, '--platform-url', 'https://10.0.0.7:8443'], {
      state: t.state,
    });
    expect(run.code).toBe(1);
    expect(refusals(run)).toEqual([
      "PLATFORM_BASE_URL https://10.0.0.7:8443 is a loopback, private or local address: a deployed Worker cannot reach it; set the real platform's https URL",
    ]);
    expect(readFileSync(t.config, 'utf8')).toBe(before);
    const http = await deploy(
      ['--config', t.config, '--platform-url', 'http://platform.example.com'],
      { state: t.state },
    );
    expect(http.code).toBe(1);
    expect(refusals(http)).toEqual([
      "PLATFORM_BASE_URL http://platform.example.com is not https: every tenant's platform key would cross the internet unencrypted",
    ]);
    expect(calls(t.state)).toEqual([]);
  });

  it('refuses the checked-in wrangler.toml as it is: no upstream, placeholder KV id, no domain', async () => {
    const t = tempConfig();
    const run = await deploy(['--config', t.config, '--dry-run'], { realWrangler: true });
    expect(run.code).toBe(1);
    expect(refusals(run)).toEqual([
      'PLATFORM_BASE_URL is not set: pass --platform-url https://platform.example.com (the real platform)',
      `KV namespace TENANTS has the placeholder id ${PLACEHOLDER} in [env.production]: run \`npm run deploy -- --env production\` (without --dry-run) to create or reuse it, or write your namespace's id there`,
      "no custom domain or route in [env.production]: the Cache API does nothing on *.workers.dev, so the gateway's second cache tier (L2, shared per data center) would be off; pass --domain gw.example.com or --route 'gw.example.com/*'",
    ]);
    expect(run.stdout).not.toContain('$ wrangler');
  });

  it('--dry-run writes the flags into [env.production] but refuses the placeholder KV id', async () => {
    const t = tempConfig();
    const run = await deploy(
      [
        '--config',
        t.config,
        '--dry-run',
        '--platform-url',
        'https://platform.example.com/',
        '--domain',
        'GW.Example.com',
      ],
      { realWrangler: true },
    );
    expect(run.code).toBe(1);
    expect(refusals(run)).toHaveLength(1);
    expect(refusals(run)[0]).toMatch(/^KV namespace TENANTS has the placeholder id/);
    const config = unstable_readConfig({ config: t.config, env: 'production' });
    expect(config.vars.PLATFORM_BASE_URL).toBe('https://platform.example.com');
    expect(config.routes).toEqual([{ pattern: 'gw.example.com', custom_domain: true }]);
    expect(config.vars.PORTAL_ORIGIN).toBe('https://gw.example.com');
    // The top level (npm start, tests) is untouched.
    const local = unstable_readConfig({ config: t.config });
    expect(local.vars.PLATFORM_BASE_URL).toBe('http://127.0.0.1:8790');
  });

  it('refuses a workers.dev domain, a route under a path, and both --domain and --route', async () => {
    const t = tempConfig();
    const dev = await deploy(['--config', t.config, '--domain', 'gw.acme.workers.dev'], {
      state: t.state,
    });
    expect(refusals(dev)).toEqual([
      '--domain gw.acme.workers.dev is on workers.dev, where the Cache API does nothing: use a domain of a zone on your account',
    ]);
    const sub = await deploy(['--config', t.config, '--route', 'example.com/api/*'], {
      state: t.state,
    });
    expect(refusals(sub)[0]).toContain("serves the platform's paths from the root");
    const both = await deploy(
      ['--config', t.config, '--route', 'gw.example.com/*', '--domain', 'gw.example.com'],
      { state: t.state },
    );
    expect(refusals(both)).toEqual(['give --domain or --route, not both']);
    expect(calls(t.state)).toEqual([]);
  });

  it('refuses when a secret did not reach the Worker, and does not deploy', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', id: KV_ID, domain: 'gw.example.com' }),
    );
    writeFileSync(t.state, JSON.stringify({ dropPuts: true }));
    const run = await deploy(['--config', t.config], { state: t.state });
    expect(run.code).toBe(1);
    expect(refusals(run)).toEqual([
      'secrets missing on the production Worker: ADMIN_TOKEN, KEY_ENCRYPTION_KEY; `npm run deploy -- --env production` generates and puts them (or `wrangler secret put <NAME> --env production`)',
    ]);
    expect(calls(t.state).map((c) => c[0])).not.toContain('deploy');
  });
});

describe('npm run deploy, deploying (wrangler stand-in)', () => {
  it('creates the KV namespace, puts generated secrets without printing them, deploys', async () => {
    const t = tempConfig();
    const run = await deploy(
      [
        '--config',
        t.config,
        '--platform-url',
        'https://platform.example.com',
        '--domain',
        'gw.example.com',
      ],
      { state: t.state },
    );
    expect(run.code, run.stderr).toBe(0);
    const state = JSON.parse(readFileSync(t.state, 'utf8'));
    const cmds = (state.calls as string[][]).map((c) => c.filter((a) => a !== t.config));
    expect(cmds).toEqual([
      ['kv', 'namespace', 'list', '--config'],
      [
        'kv',
        'namespace',
        'create',
        'agent-platform-gateway-TENANTS',
        '--env',
        'production',
        '--config',
      ],
      // The usage export's queues and archive (docs/BILLING.md), each looked up by name.
      ['queues', 'info', 'usage-events', '--config'],
      ['queues', 'create', 'usage-events', '--config'],
      ['queues', 'info', 'usage-events-dlq', '--config'],
      ['queues', 'create', 'usage-events-dlq', '--config'],
      ['r2', 'bucket', 'info', 'usage-archive', '--config'],
      ['r2', 'bucket', 'create', 'usage-archive', '--config'],
      ['r2', 'bucket', 'lifecycle', 'list', 'usage-archive', '--config'],
      [
        'r2',
        'bucket',
        'lifecycle',
        'add',
        'usage-archive',
        'expire-archive',
        '--expire-days',
        '35',
        '--force',
        '--config',
      ],
      ['secret', 'list', '--env', 'production', '--format', 'json', '--config'],
      ['secret', 'put', 'ADMIN_TOKEN', '--env', 'production', '--config'],
      ['secret', 'put', 'KEY_ENCRYPTION_KEY', '--env', 'production', '--config'],
      ['secret', 'list', '--env', 'production', '--format', 'json', '--config'],
      ['deploy', '--env', 'production', '--config'],
    ]);
    expect(state.queues.map((q: { name: string }) => q.name)).toEqual([
      'usage-events',
      'usage-events-dlq',
    ]);
    expect(state.buckets).toEqual([
      { name: 'usage-archive', rules: [{ id: 'expire-archive', expireDays: 35 }] },
    ]);
    // The namespace's id is in [env.production]; the top level keeps the placeholder.
    const ns = state.namespaces[0];
    expect(ns.title).toBe('production-agent-platform-gateway-TENANTS');
    const config = unstable_readConfig({ config: t.config, env: 'production' });
    expect(config.kv_namespaces).toEqual([{ binding: 'TENANTS', id: ns.id }]);
    expect(unstable_readConfig({ config: t.config }).kv_namespaces[0].id).toBe(PLACEHOLDER);

    // Secrets: well formed, kept in a 0600 file the output names, never printed.
    const { ADMIN_TOKEN, KEY_ENCRYPTION_KEY } = state.secrets;
    expect(ADMIN_TOKEN.length).toBeGreaterThanOrEqual(32);
    const [kid, key] = KEY_ENCRYPTION_KEY.split(':');
    expect(kid).toMatch(/^k\d{8}$/);
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    const file = path.join(t.dir, '.dev', 'production-secrets.env');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = readFileSync(file, 'utf8');
    expect(saved).toContain(`ADMIN_TOKEN=${ADMIN_TOKEN}\n`);
    expect(saved).toContain(`KEY_ENCRYPTION_KEY=${KEY_ENCRYPTION_KEY}\n`);
    for (const secret of [ADMIN_TOKEN, KEY_ENCRYPTION_KEY, key]) {
      expect(run.stdout).not.toContain(secret);
      expect(run.stderr).not.toContain(secret);
    }
    expect(run.stdout).toContain('production-secrets.env (mode 0600)');
    expect(run.stdout).toContain(
      'Deployed agent-platform-gateway-production at https://gw.example.com',
    );

    // Again: nothing to create or put, the same secrets, deployed again.
    writeFileSync(t.state, JSON.stringify({ ...state, calls: [] }));
    const again = await deploy(['--config', t.config], { state: t.state });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Secret ADMIN_TOKEN: already set on the Worker, left as it is');
    const after = JSON.parse(readFileSync(t.state, 'utf8'));
    expect((after.calls as string[][]).map((c) => c.slice(0, 4).join(' '))).toEqual([
      'queues info usage-events --config',
      'queues info usage-events-dlq --config',
      'r2 bucket info usage-archive',
      'r2 bucket lifecycle list',
      'secret list --env production',
      'secret list --env production',
      'deploy --env production --config',
    ]);
    expect(after.queues).toEqual(state.queues);
    expect(after.buckets).toEqual(state.buckets);
    expect(again.stdout).toContain('Queue usage-events: exists, left as it is');
    expect(after.secrets).toEqual(state.secrets);
  });

  it('creates only the usage export resources the account lacks, and the archive rule a bucket lacks', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', id: KV_ID, domain: 'gw.example.com' }),
    );
    const dlq = { id: 'd'.repeat(32), name: 'usage-events-dlq' };
    writeFileSync(
      t.state,
      JSON.stringify({
        workerExists: true,
        secrets: { ADMIN_TOKEN: 'x', KEY_ENCRYPTION_KEY: 'y' },
        // A queue whose name starts with the wanted one's is not taken for it.
        queues: [{ id: 'e'.repeat(32), name: 'usage-events-old' }, dlq],
        // A bucket made by hand, or by a deploy stopped before its rule.
        buckets: [{ name: 'usage-archive', rules: [] }],
      }),
    );
    const run = await deploy(['--config', t.config], {
      state: t.state,
      env: { USAGE_ARCHIVE_DAYS: '90' },
    });
    expect(run.code, run.stderr).toBe(0);
    const state = JSON.parse(readFileSync(t.state, 'utf8'));
    const creates = (state.calls as string[][]).filter(
      (c) => c.includes('create') || c.includes('add'),
    );
    expect(creates.map((c) => c.slice(0, 6).join(' '))).toEqual([
      `queues create usage-events --config ${t.config}`,
      'r2 bucket lifecycle add usage-archive expire-archive',
    ]);
    expect(state.queues.map((q: { name: string }) => q.name)).toEqual([
      'usage-events-old',
      'usage-events-dlq',
      'usage-events',
    ]);
    expect(state.queues[1]).toEqual(dlq);
    expect(state.buckets).toEqual([
      { name: 'usage-archive', rules: [{ id: 'expire-archive', expireDays: 90 }] },
    ]);
    expect(state.deployed).toEqual({ env: 'production', config: t.config });
  });

  it('stops before creating anything when a lookup fails for another reason than absence', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', id: KV_ID, domain: 'gw.example.com' }),
    );
    writeFileSync(t.state, JSON.stringify({ lookupsForbidden: true }));
    const run = await deploy(['--config', t.config], { state: t.state });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('wrangler could not say whether it exists');
    expect(run.stderr).toContain('Authentication error [code: 10000]');
    expect(calls(t.state).map((c) => c.slice(0, 2).join(' '))).toEqual(['queues info']);
  });

  it('refuses a USAGE_ARCHIVE_DAYS that is not a whole number of days, before any wrangler call', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', id: KV_ID, domain: 'gw.example.com' }),
    );
    const run = await deploy(['--config', t.config], {
      state: t.state,
      env: { USAGE_ARCHIVE_DAYS: '35 days' },
    });
    expect(refusals(run)).toEqual([
      'USAGE_ARCHIVE_DAYS must be a whole number of days, at least 1',
    ]);
    expect(calls(t.state)).toEqual([]);
  });

  it('--route writes a route (the zone is found from its host)', async () => {
    const t = tempConfig(production({ url: 'https://platform.example.com', id: KV_ID }));
    writeFileSync(
      t.state,
      JSON.stringify({
        workerExists: true,
        secrets: { ADMIN_TOKEN: 'x', KEY_ENCRYPTION_KEY: 'y' },
      }),
    );
    const run = await deploy(['--config', t.config, '--route', 'gw.example.com/*'], {
      state: t.state,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(unstable_readConfig({ config: t.config, env: 'production' }).routes).toEqual([
      'gw.example.com/*',
    ]);
    expect(run.stdout).toContain(
      'Deployed agent-platform-gateway-production at https://gw.example.com',
    );
  });

  it('--console-domain deploys the console Worker after the gateway, bound to it, with /admin off the gateway host', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', id: KV_ID, domain: 'gw.example.com' }),
    );
    writeFileSync(
      t.state,
      JSON.stringify({
        workerExists: true,
        secrets: { ADMIN_TOKEN: 'x', KEY_ENCRYPTION_KEY: 'y' },
      }),
    );
    const consoleConfig = path.join(t.dir, 'console.toml');
    writeFileSync(
      consoleConfig,
      readFileSync(path.join(ROOT, 'console', 'wrangler.toml'), 'utf8')
        .replace(
          /^main = .*$/m,
          `main = ${JSON.stringify(path.join(ROOT, 'console', 'src', 'index.ts'))}`,
        )
        .replace(
          /^directory = .*$/m,
          `directory = ${JSON.stringify(path.join(ROOT, 'build', 'assets'))}`,
        ),
    );
    const aud = 'a'.repeat(64);
    const flags = [
      '--console-domain',
      'ops.example.com',
      '--access-team',
      'myteam.cloudflareaccess.com',
    ];
    const refused = await deploy(
      ['--config', t.config, '--console-config', consoleConfig, ...flags],
      {
        state: t.state,
      },
    );
    expect(refusals(refused)).toEqual([
      "--access-aud must be the Access application's Audience (AUD) tag: 64 hex digits",
    ]);
    expect(calls(t.state)).toEqual([]);

    const run = await deploy(
      ['--config', t.config, '--console-config', consoleConfig, ...flags, '--access-aud', aud],
      { state: t.state },
    );
    expect(run.code, run.stderr).toBe(0);
    const deploys = calls(t.state).filter((c) => c[0] === 'deploy');
    expect(deploys.map((c) => c.at(-1))).toEqual([t.config, consoleConfig]);
    const gateway = unstable_readConfig({ config: t.config, env: 'production' });
    expect(gateway.vars).toMatchObject({
      OPERATOR_API: 'binding',
      ACCESS_TEAM_DOMAIN: 'myteam.cloudflareaccess.com',
      ACCESS_AUD: aud,
      // Portal links made through the console point at the gateway's own host.
      PORTAL_ORIGIN: 'https://gw.example.com',
    });
    const consoleWorker = unstable_readConfig({ config: consoleConfig, env: 'production' });
    expect(consoleWorker.routes).toEqual([{ pattern: 'ops.example.com', custom_domain: true }]);
    expect(consoleWorker.services).toEqual([
      {
        binding: 'GATEWAY',
        service: 'agent-platform-gateway-production',
        entrypoint: 'OperatorApi',
      },
    ]);
    expect(run.stdout).toContain('https://ops.example.com/console/');
  });

  it('reuses an existing namespace and the saved key-encryption key', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', domain: 'gw.example.com' }),
    );
    const existing = 'abcdefabcdefabcdefabcdefabcdef12';
    writeFileSync(
      t.state,
      JSON.stringify({
        namespaces: [
          { id: '11111111111111111111111111111111', title: 'production-TENANTS' },
          { id: existing, title: 'production-agent-platform-gateway-TENANTS' },
        ],
      }),
    );
    // A key-encryption key from an earlier deploy (the Worker was deleted since): kept, not replaced.
    const kek = `k20260101:${Buffer.alloc(32, 7).toString('base64')}`;
    const file = path.join(t.dir, '.dev', 'production-secrets.env');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `KEY_ENCRYPTION_KEY=${kek}\n`, { mode: 0o644 });
    const run = await deploy(['--config', t.config], { state: t.state });
    expect(run.code, run.stderr).toBe(0);
    const state = JSON.parse(readFileSync(t.state, 'utf8'));
    const kvCreate = (c: string[]) => c[0] === 'kv' && c[2] === 'create';
    expect((state.calls as string[][]).some(kvCreate)).toBe(false);
    expect(run.stdout).toContain(
      'Reusing KV namespace "production-agent-platform-gateway-TENANTS"',
    );
    expect(unstable_readConfig({ config: t.config, env: 'production' }).kv_namespaces[0].id).toBe(
      existing,
    );
    expect(state.secrets.KEY_ENCRYPTION_KEY).toBe(kek);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(run.stdout + run.stderr).not.toContain(kek.split(':')[1]);
  });
});

describe('npm run deploy, when wrangler is not logged in', () => {
  it('stops at the first account command and says how to log in', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', domain: 'gw.example.com' }),
    );
    writeFileSync(t.state, JSON.stringify({ notLoggedIn: true }));
    const run = await deploy(['--config', t.config], { state: t.state });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('deploy failed: wrangler kv namespace list exited with code 1');
    expect(run.stderr).toContain(
      'Log in first (npx wrangler login), or set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID.',
    );
    expect(calls(t.state)).toHaveLength(1);
  });
});

describe('npm run deploy -- --dry-run (real wrangler, offline)', () => {
  it('builds the bundle as deploy would and reports its size against the budget', async () => {
    const t = tempConfig(
      production({ url: 'https://platform.example.com', id: KV_ID, domain: 'gw.example.com' }),
    );
    const outdir = path.join(t.dir, 'dist');
    const run = await deploy(['--config', t.config, '--dry-run', '--outdir', outdir], {
      realWrangler: true,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Bundle: .*index\.js \d+\.\d KiB uncompressed \(budget \d+ KiB\)/);
    expect(run.stdout).toContain(
      `Checks passed: upstream https://platform.example.com, KV TENANTS ${KV_ID}, custom domain gw.example.com; secrets not checked`,
    );
    expect(existsSync(path.join(outdir, 'index.js'))).toBe(true);
  });
});

describe('test/deploy/wrangler.toml (npm run deploy:check)', () => {
  it('matches wrangler.toml: same Worker, bindings, vars and migrations', () => {
    const checked = path.join(ROOT, 'test', 'deploy', 'wrangler.toml');
    const real = path.join(ROOT, 'wrangler.toml');
    const shape = (config: string, env?: string) => {
      const c = unstable_readConfig({ config, env });
      return {
        name: c.name,
        main: c.main,
        compatibility_date: c.compatibility_date,
        compatibility_flags: c.compatibility_flags,
        vars: Object.keys(c.vars).sort(),
        kv: c.kv_namespaces.map((k: { binding: string }) => k.binding),
        durable_objects: c.durable_objects.bindings,
        migrations: c.migrations,
        workers_dev: c.workers_dev,
        observability: c.observability,
        assets: c.assets && path.resolve(path.dirname(config), c.assets.directory ?? ''),
      };
    };
    expect(shape(checked, 'production')).toEqual(shape(real, 'production'));
    expect(shape(checked)).toEqual(shape(real));
    // And it passes every check a dry run makes.
    expect(
      checkDeployConfig(unstable_readConfig({ config: checked, env: 'production' }), null),
    ).toEqual([]);
  });
});
