/**
 * `npm run deploy -- --env production`: a thin wrapper around wrangler that
 * deploys the gateway only when it would work (docs/DEPLOY.md).
 *
 * 1. Writes --platform-url and --domain (or --route) into `[env.production]`
 *    of wrangler.toml (asks for them on a terminal when missing).
 * 2. Refuses, before any call to Cloudflare, a loopback/private or non-https
 *    upstream, or no custom domain or route (scripts/deploy/checks.ts).
 * 3. Finds the KV namespace for TENANTS (`wrangler kv namespace list`) or
 *    creates it, and writes its id into `[env.production]`.
 * 3b. Creates the usage export's queues (usage-events, usage-events-dlq) and archive
 *    bucket where the account lacks them (scripts/deploy/usage-export.ts), the bucket with
 *    a lifecycle rule deleting archived batches after USAGE_ARCHIVE_DAYS (default 35).
 * 4. Generates ADMIN_TOKEN and KEY_ENCRYPTION_KEY where the Worker has none
 *    (`wrangler secret list`), keeps them in .dev/<env>-secrets.env (mode
 *    0600, beside the config) and puts them through stdin; never prints them.
 * 5. Checks everything again, secrets included, and runs `wrangler deploy`.
 *
 * `--dry-run` does 1 and 2, refuses a placeholder KV id too, and builds the
 * bundle (`wrangler deploy --dry-run --outdir`), checking its size against
 * package.json's `config.bundleBudgetKiB`: nothing on the account is touched.
 * `npm run deploy:check` is that, with test/deploy/wrangler.toml.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { unstable_readConfig } from 'wrangler';
import {
  checkBundleSize,
  checkDeployConfig,
  checkDomain,
  checkPlatformUrl,
  checkRoute,
  type DeployConfig,
  REQUIRED_SECRETS,
  type Refusal,
  varsNotInEnv,
} from './deploy/checks';
import {
  accessSteps,
  applyConsoleSettings,
  type ConsoleDeploy,
  consoleProblems,
} from './deploy/console';
import { hasTomlTable, setTomlKey } from './deploy/toml';
import { createUsageExportResources, type UsageExportBindings } from './deploy/usage-export';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Tests point this at a stand-in for wrangler, so the whole flow runs offline. */
const WRANGLER =
  process.env.DEPLOY_WRANGLER_BIN ??
  path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

const HELP = `Usage: npm run deploy -- --env production [options]

  --platform-url URL   the platform's https base URL (written into [env.<env>.vars])
  --domain HOST        custom domain for the gateway, e.g. gw.example.com
  --route PATTERN      or a route on a zone of yours, e.g. gw.example.com/*
  --config PATH        wrangler config (default: wrangler.toml)
  --dry-run            checks and build only (wrangler deploy --dry-run); touches no account
  --outdir DIR         where --dry-run writes the bundle (default .dev/dist)
  --console-domain HOST   also deploy the operator console Worker on HOST, behind
                          Cloudflare Access; /admin leaves the gateway's hostname
  --access-team TEAM      with it: your team domain, e.g. myteam.cloudflareaccess.com
  --access-aud AUD        with it: the Access application's Audience (AUD) tag
  --access-roles JSON     optional: {"admin":[...],"viewer":[...]} (ACCESS_ROLES)
  --console-config PATH   the console's wrangler config (default: console/wrangler.toml)

Secrets it generates are kept in .dev/<env>-secrets.env beside the config (mode 0600).
See docs/DEPLOY.md.`;

class Refused extends Error {}

function parseOptions() {
  const { values } = parseArgs({
    options: {
      env: { type: 'string', short: 'e', default: 'production' },
      config: { type: 'string', short: 'c' },
      'platform-url': { type: 'string' },
      domain: { type: 'string' },
      route: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      outdir: { type: 'string' },
      'console-domain': { type: 'string' },
      'console-config': { type: 'string' },
      'access-team': { type: 'string' },
      'access-aud': { type: 'string' },
      'access-roles': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return values;
}

async function main(): Promise<void> {
  const env = opts.env;
  if (!/^[a-z0-9-]+$/.test(env)) throw new Refused(`--env must be a name such as production`);
  const configPath = path.resolve(opts.config ?? path.join(ROOT, 'wrangler.toml'));
  if (!existsSync(configPath)) throw new Refused(`no wrangler config at ${configPath}`);
  if (!hasTomlTable(readFileSync(configPath, 'utf8'), `env.${env}`)) {
    throw new Refused(
      `${rel(configPath)} has no [env.${env}] section: copy the one in the repository's wrangler.toml`,
    );
  }
  const dryRun = opts['dry-run'];
  const keepArchiveDays = archiveDays();
  console.log(`${dryRun ? 'Checking' : 'Deploying'} [env.${env}] of ${rel(configPath)}`);

  await applySettings(configPath, env);
  const consoleSite = consoleDeploy(configPath, env);

  // Everything that needs no account first: a refusal here happens before any wrangler call.
  let config = readConfig(configPath, env);
  const kv = config.kv_namespaces.find((ns) => ns.binding === 'TENANTS');
  const provisionKv = !dryRun && kv !== undefined && (!kv.id || /^0+$/.test(kv.id));
  const topLevel = readConfig(configPath, '');
  refuseIf(
    checkDeployConfig(config, null, { env, topLevel }).filter(
      (r) => !(provisionKv && r.check === 'kv_namespace'),
    ),
  );
  const defaults = varsNotInEnv(topLevel, config);
  if (defaults.length > 0) {
    console.log(
      `Note: [env.${env}] does not set ${defaults.join(', ')} (set at the top level); ${env} uses the gateway's defaults`,
    );
  }

  if (dryRun) {
    await build(configPath, env);
    if (consoleSite) await build(consoleSite.config, env, { budget: false });
    console.log(
      `Checks passed: ${summary(config)}; secrets not checked (a dry run touches no account).`,
    );
    return;
  }

  if (provisionKv) {
    const id = await tenantsNamespace(configPath, env, config.topLevelName ?? config.name ?? '');
    edit(configPath, (text) =>
      setTomlKey(text, `env.${env}.kv_namespaces`, 'id', id, {
        where: { key: 'binding', value: 'TENANTS' },
      }),
    );
    config = readConfig(configPath, env);
    if (config.kv_namespaces.find((ns) => ns.binding === 'TENANTS')?.id !== id) {
      throw new Error(`could not write the KV id into ${rel(configPath)}: set it by hand (${id})`);
    }
    console.log(`KV namespace TENANTS: ${id} (written into [env.${env}])`);
  }

  await createUsageExportResources(config, configPath, keepArchiveDays, wrangler);
  await putMissingSecrets(configPath, env);
  refuseIf(checkDeployConfig(config, await secretNames(configPath, env), { env, topLevel }));

  console.log(`Checks passed: ${summary(config)}; secrets ${REQUIRED_SECRETS.join(', ')} set.`);
  await wrangler(['deploy', '--env', env, '--config', configPath], { show: true });
  if (consoleSite) {
    // After the gateway: the console's Service Binding names the gateway's entrypoint.
    await wrangler(['deploy', '--env', env, '--config', consoleSite.config], { show: true });
    console.log(`\n${accessSteps(consoleSite.flags)}`);
  }
  const target = config.routes?.[0];
  const host = typeof target === 'string' ? target.split('/')[0] : target?.pattern.split('/')[0];
  console.log(`
Deployed ${config.name}${host ? ` at https://${host}` : ''}.
  Operator token (ADMIN_TOKEN) and key-encryption key: ${rel(secretsFile(configPath, env))} (mode 0600).
  Load it:      export ADMIN_TOKEN=$(grep ^ADMIN_TOKEN= ${rel(secretsFile(configPath, env))} | cut -d= -f2-)
  First tenant: PLATFORM_KEY=… npm run admin -- --url https://${host ?? '<domain>'} tenant create --name …
  Smoke test:   SMOKE_TOKEN=<a tenant token> npm run smoke -- https://${host ?? '<domain>'}`);
}

/** --console-domain and the Access flags: checked, then written into both configs. */
function consoleDeploy(configPath: string, env: string) {
  const domain = opts['console-domain'];
  const others = [opts['access-team'], opts['access-aud'], opts['access-roles']];
  if (domain === undefined) {
    if (others.some((v) => v !== undefined)) {
      throw new Refused('--access-team, --access-aud and --access-roles go with --console-domain');
    }
    return undefined;
  }
  const flags: ConsoleDeploy = {
    domain,
    accessTeam: opts['access-team'] ?? '',
    accessAud: opts['access-aud'] ?? '',
    ...(opts['access-roles'] === undefined ? {} : { accessRoles: opts['access-roles'] }),
  };
  const problems = consoleProblems(flags);
  if (problems.length > 0) throw new Refused(problems.join('\n'));
  const config = path.resolve(
    opts['console-config'] ?? path.join(ROOT, 'console', 'wrangler.toml'),
  );
  if (!existsSync(config)) throw new Refused(`no console config at ${config}`);
  const gatewayWorker = readConfig(configPath, env).name ?? '';
  applyConsoleSettings(configPath, config, env, gatewayWorker, flags);
  console.log(`Console: ${domain}, bound to ${gatewayWorker}#OperatorApi; OPERATOR_API=binding`);
  // Portal links made through the console must point at the gateway's hostname, not the console's.
  const target = readConfig(configPath, env).routes?.[0];
  const gatewayHost =
    typeof target === 'string' ? target.split('/')[0] : target?.pattern.split('/')[0];
  if (gatewayHost && !gatewayHost.includes('*')) {
    edit(configPath, (t) =>
      setTomlKey(t, `env.${env}.vars`, 'PORTAL_ORIGIN', `https://${gatewayHost}`),
    );
    console.log(`Partner portal links: https://${gatewayHost}/portal/ (PORTAL_ORIGIN)`);
  } else if (!readConfig(configPath, env).vars.PORTAL_ORIGIN) {
    // The gateway refuses to start with OPERATOR_API=binding and no PORTAL_ORIGIN.
    throw new Refused(
      `set PORTAL_ORIGIN in [env.${env}.vars] to the gateway's public origin (https://…): the route ${String(gatewayHost)} names no single host`,
    );
  }
  return { config, flags };
}

/** What will be deployed, in one line (no secrets in a config). */
function summary(config: ResolvedConfig): string {
  const kv = config.kv_namespaces.find((ns) => ns.binding === 'TENANTS')?.id;
  const targets = (config.routes ?? []).map((r) =>
    typeof r === 'string'
      ? `route ${r}`
      : `${r.custom_domain ? 'custom domain' : 'route'} ${r.pattern}`,
  );
  return [`upstream ${config.vars.PLATFORM_BASE_URL}`, `KV TENANTS ${kv}`, ...targets].join(', ');
}

function refuseIf(refusals: Refusal[]): void {
  if (refusals.length > 0) throw new Refused(refusals.map((r) => r.message).join('\n'));
}

/** --platform-url, --domain and --route (or answers on a terminal) into [env.<env>]. */
async function applySettings(configPath: string, env: string): Promise<void> {
  if (opts.domain && opts.route) throw new Refused('give --domain or --route, not both');
  const current = readConfig(configPath, env);
  let platformUrl = opts['platform-url'];
  let domain = opts.domain;
  const route = opts.route;
  const interactive = process.stdin.isTTY && process.stdout.isTTY;
  if (
    interactive &&
    platformUrl === undefined &&
    checkPlatformUrl(current.vars.PLATFORM_BASE_URL)
  ) {
    platformUrl = await ask("The platform's base URL (https://…): ");
  }
  if (interactive && !domain && !route && (current.routes ?? []).length === 0) {
    domain = await ask('Custom domain for the gateway (e.g. gw.example.com): ');
  }
  // Refuse bad values before writing anything.
  const problems = [
    platformUrl === undefined ? undefined : checkPlatformUrl(platformUrl),
    domain === undefined ? undefined : checkDomain(domain),
    route === undefined ? undefined : checkRoute(route),
  ].filter((p): p is string => p !== undefined);
  if (problems.length > 0) throw new Refused(problems.join('\n'));

  if (platformUrl !== undefined) {
    platformUrl = new URL(platformUrl).href.replace(/\/$/, '');
    edit(configPath, (t) => setTomlKey(t, `env.${env}.vars`, 'PLATFORM_BASE_URL', platformUrl!));
  }
  if (domain) {
    edit(configPath, (t) =>
      setTomlKey(t, `env.${env}`, 'routes', [
        { pattern: domain!.toLowerCase(), custom_domain: true },
      ]),
    );
    // Partner portal links point at the gateway's own hostname (never a request's Host).
    edit(configPath, (t) =>
      setTomlKey(t, `env.${env}.vars`, 'PORTAL_ORIGIN', `https://${domain!.toLowerCase()}`),
    );
  } else if (route) {
    // wrangler finds the zone from the route's host.
    edit(configPath, (t) => setTomlKey(t, `env.${env}`, 'routes', [route!.toLowerCase()]));
  }
  // The edit is line-based: make sure wrangler reads back what was meant.
  const after = readConfig(configPath, env);
  const landed =
    (platformUrl === undefined || after.vars.PLATFORM_BASE_URL === platformUrl) &&
    (!domain && !route
      ? true
      : JSON.stringify(after.routes ?? []).includes(
          JSON.stringify((domain ?? route)!.toLowerCase()),
        ));
  if (!landed) {
    throw new Error(
      `could not write the settings into [env.${env}] of ${rel(configPath)}: set them by hand`,
    );
  }
}

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

function edit(file: string, change: (text: string) => string): void {
  writeFileSync(file, change(readFileSync(file, 'utf8')));
}

/** wrangler's resolved config for the environment (wrangler's own types for it are loose). */
type ResolvedConfig = DeployConfig &
  UsageExportBindings &
  Required<Pick<DeployConfig, 'vars' | 'kv_namespaces'>> & { name?: string; topLevelName?: string };

/** `env` '' is the top level. */
function readConfig(configPath: string, env: string): ResolvedConfig {
  return unstable_readConfig({ config: configPath, ...(env ? { env } : {}) }) as ResolvedConfig;
}

/** The namespace titled `<env>-<worker>-TENANTS`: found in the account's list, or created. */
async function tenantsNamespace(configPath: string, env: string, worker: string): Promise<string> {
  const name = `${worker}-TENANTS`;
  // wrangler puts the environment before the name it is given.
  const title = `${env}-${name}`;
  const findIn = (stdout: string) =>
    (jsonIn(stdout) as { id: string; title: string }[]).find((ns) => ns.title === title)?.id;
  const existing = findIn(
    (await wrangler(['kv', 'namespace', 'list', '--config', configPath], {})).stdout,
  );
  if (existing) {
    console.log(`Reusing KV namespace "${title}"`);
    return existing;
  }
  const created = await wrangler(
    ['kv', 'namespace', 'create', name, '--env', env, '--config', configPath],
    {},
  );
  const id =
    /\bid\s*[=:]\s*"([0-9a-f]{32})"/i.exec(created.stdout)?.[1] ??
    findIn((await wrangler(['kv', 'namespace', 'list', '--config', configPath], {})).stdout);
  if (!id) throw new Error(`created KV namespace "${title}" but could not read its id`);
  return id;
}

/** How long the usage archive keeps a delivered batch: the bucket's lifecycle rule, in days. */
function archiveDays(): number {
  const days = Number(process.env.USAGE_ARCHIVE_DAYS ?? 35);
  if (!Number.isInteger(days) || days < 1) {
    throw new Refused(`USAGE_ARCHIVE_DAYS must be a whole number of days, at least 1`);
  }
  return days;
}

/** The names of the Worker's secrets; none when the Worker does not exist yet. */
async function secretNames(configPath: string, env: string): Promise<string[]> {
  const res = await wrangler(
    ['secret', 'list', '--env', env, '--format', 'json', '--config', configPath],
    { allowFailure: true },
  );
  if (res.code !== 0) {
    if (/not found/i.test(res.stdout + res.stderr)) return [];
    throw new Error(`wrangler secret list failed:\n${res.stdout}${res.stderr}`);
  }
  return (jsonIn(res.stdout) as { name: string }[]).map((s) => s.name);
}

function secretsFile(configPath: string, env: string): string {
  return path.join(path.dirname(configPath), '.dev', `${env}-secrets.env`);
}

/** Fresh values: an operator token, and one key (kid dated today) that seals platform keys. */
const GENERATE: Record<(typeof REQUIRED_SECRETS)[number], () => string> = {
  ADMIN_TOKEN: () => randomBytes(32).toString('base64url'),
  KEY_ENCRYPTION_KEY: () =>
    `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}:${randomBytes(32).toString('base64')}`,
};

/**
 * Puts each required secret the Worker lacks: the value kept in the local
 * secrets file if there is one (a lost KEY_ENCRYPTION_KEY would make every
 * sealed platform key unreadable), else a new one, saved there first.
 */
async function putMissingSecrets(configPath: string, env: string): Promise<void> {
  const have = await secretNames(configPath, env);
  const missing = REQUIRED_SECRETS.filter((name) => !have.includes(name));
  for (const name of REQUIRED_SECRETS.filter((n) => have.includes(n))) {
    console.log(`Secret ${name}: already set on the Worker, left as it is`);
  }
  if (missing.length === 0) return;

  const file = secretsFile(configPath, env);
  const saved = readSecretsFile(file);
  for (const name of missing) saved[name] ??= GENERATE[name]();
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    `# Secrets of the ${env} gateway, made by npm run deploy. Never commit; keep a copy in a password manager\n` +
      '# (Cloudflare never shows a secret again; rotating KEY_ENCRYPTION_KEY needs the current value).\n' +
      Object.entries(saved)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    { mode: 0o600 },
  );
  chmodSync(file, 0o600);
  for (const name of missing) {
    await wrangler(['secret', 'put', name, '--env', env, '--config', configPath], {
      input: saved[name]!,
      show: true,
    });
    console.log(`Secret ${name}: put (value in ${rel(file)})`);
  }
}

function readSecretsFile(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  const values: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.+)$/.exec(line.trim());
    if (m) values[m[1]!] = m[2]!;
  }
  return values;
}

/** `wrangler deploy --dry-run`: the bundle as it would be uploaded, and its size against the budget. */
async function build(configPath: string, env: string, o = { budget: true }): Promise<void> {
  const outdir = path.resolve(opts.outdir ?? path.join(ROOT, '.dev', 'dist'));
  if (!o.budget) {
    // The console Worker: a few lines of forwarding, checked to build, not budgeted.
    const consoleOut = path.join(outdir, 'console');
    await wrangler(
      ['deploy', '--dry-run', '--env', env, '--outdir', consoleOut, '--config', configPath],
      {},
    );
    console.log(`Console Worker: built into ${rel(consoleOut)}`);
    return;
  }
  await wrangler(
    ['deploy', '--dry-run', '--env', env, '--outdir', outdir, '--config', configPath],
    {},
  );
  const main = path.join(outdir, 'index.js');
  const bytes = statSync(main).size;
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const budget = Number(pkg.config?.bundleBudgetKiB);
  if (!Number.isFinite(budget))
    throw new Error('package.json has no "config": {"bundleBudgetKiB"}');
  console.log(
    `Bundle: ${rel(main)} ${(bytes / 1024).toFixed(1)} KiB uncompressed (budget ${budget} KiB)`,
  );
  const over = checkBundleSize(bytes, budget);
  if (over) throw new Refused(over);
}

interface RunOptions {
  /** Written to wrangler's stdin (a secret's value); never echoed, and scrubbed from its output. */
  input?: string;
  /** Pass the output through as it comes. */
  show?: boolean;
  /** Return a non-zero exit instead of throwing. */
  allowFailure?: boolean;
}

/** Runs wrangler (echoing the command, never a secret), offline where it can be. */
function wrangler(
  args: string[],
  run: RunOptions,
): Promise<{ code: number; stdout: string; stderr: string }> {
  console.log(`$ wrangler ${args.map((a) => (a.includes(' ') ? `'${a}'` : a)).join(' ')}`);
  const scrub = (s: string) => (run.input ? s.replaceAll(run.input, '[secret]') : s);
  return new Promise((resolve, reject) => {
    // Shown without a secret to hide: wrangler gets the terminal (its prompts, colours, login).
    const passThrough = run.show && run.input === undefined;
    const child = spawn(process.execPath, [WRANGLER, ...args], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
      stdio: passThrough
        ? 'inherit'
        : [run.input === undefined ? 'inherit' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d;
      if (run.show) process.stdout.write(scrub(d.toString()));
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d;
      if (run.show) process.stderr.write(scrub(d.toString()));
    });
    if (run.input !== undefined) child.stdin?.end(run.input);
    child.on('error', reject);
    child.on('close', (code) => {
      const result = { code: code ?? 1, stdout: scrub(stdout), stderr: scrub(stderr) };
      if (result.code === 0 || run.allowFailure) return resolve(result);
      const output = `${result.stdout}${result.stderr}`;
      const login =
        /CLOUDFLARE_API_TOKEN|not authenticated|wrangler login|CLOUDFLARE_ACCOUNT_ID/.test(output)
          ? '\nLog in first (npx wrangler login), or set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID.'
          : '';
      reject(
        new Error(
          `wrangler ${args.slice(0, 3).join(' ')} exited with code ${result.code}` +
            (run.show ? '' : `\n${output}`) +
            login,
        ),
      );
    });
  });
}

/** The first JSON array in wrangler's output (it may print notices first). */
function jsonIn(stdout: string): unknown[] {
  const start = stdout.indexOf('[');
  if (start < 0)
    throw new Error(`expected a JSON list from wrangler, got: ${stdout.slice(0, 200)}`);
  return JSON.parse(stdout.slice(start)) as unknown[];
}

function rel(file: string): string {
  const r = path.relative(process.cwd(), file);
  return r.startsWith('..') ? file : r;
}

// Run last: everything above (constants included) is initialised by then.
let opts: ReturnType<typeof parseOptions>;
try {
  opts = parseOptions();
} catch (err) {
  console.error(`deploy: ${(err as Error).message}\n\n${HELP}`);
  process.exit(2);
}
if (opts.help) {
  console.log(HELP);
  process.exit(0);
}
try {
  await main();
} catch (err) {
  if (err instanceof Refused) {
    for (const line of err.message.split('\n')) console.error(`deploy refused: ${line}`);
  } else {
    console.error(`deploy failed: ${(err as Error).message}`);
  }
  process.exit(1);
}
