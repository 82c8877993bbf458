/**
 * Starts the local stack: the platform emulator and the gateway under
 * `wrangler dev` (workerd), each in its own process, and stops both.
 * Used by `npm start` and the Node tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { adminClient } from '../ui/lib/admin-client';

export interface StackOptions {
  gatewayPort: number;
  emulatorPort: number;
  /** Extra Worker vars, e.g. settings for a benchmark. */
  vars?: Record<string, string>;
  /** Where wrangler keeps local KV and Durable Object state. */
  persistTo?: string;
  quiet?: boolean;
  /** Takes the gateway's output line by line (npm start filters it), instead of the terminal. */
  output?: (line: string) => void;
}

export interface Stack {
  gatewayUrl: string;
  emulatorUrl: string;
  adminToken: string;
  stop(): Promise<void>;
}

const DEV_VARS = '.dev.vars';

/** Local secrets, made with fresh random values the first time they are missing. */
const LOCAL_SECRETS: Record<string, () => string> = {
  ADMIN_TOKEN: () => randomBytes(24).toString('base64url'),
  KEY_ENCRYPTION_KEY: () => `local1:${randomBytes(32).toString('base64')}`,
  // The usage export's signing key: the emulator's sink checks batches with it.
  USAGE_SINK_SECRET: () => randomBytes(32).toString('base64url'),
};

/** Local secrets live in .dev.vars (git-ignored, never committed). */
export function ensureDevVars(): Record<string, string> {
  const text = existsSync(DEV_VARS)
    ? readFileSync(DEV_VARS, 'utf8')
    : '# Local-only secrets for `wrangler dev`, made by scripts/stack.ts. Never commit.\n';
  const vars: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) vars[m[1]!] = m[2]!;
  }
  const missing = Object.keys(LOCAL_SECRETS).filter((name) => !vars[name]);
  if (missing.length > 0) {
    for (const name of missing) vars[name] = LOCAL_SECRETS[name]!();
    writeFileSync(DEV_VARS, text + missing.map((name) => `${name}=${vars[name]}\n`).join(''), {
      mode: 0o600,
    });
  }
  return vars;
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const secrets = ensureDevVars();
  const emulatorUrl = `http://127.0.0.1:${opts.emulatorPort}`;
  const gatewayUrl = `http://127.0.0.1:${opts.gatewayPort}`;
  const io = opts.quiet ? 'ignore' : 'inherit';

  const emulator = spawn('tsx', ['emulator/server.ts'], {
    env: {
      ...process.env,
      EMULATOR_PORT: String(opts.emulatorPort),
      EMULATOR_USAGE_SECRET: secrets.USAGE_SINK_SECRET,
    },
    stdio: ['ignore', 'ignore', io],
    detached: true,
  });
  // Local development: quota alert webhooks may go to the emulator's receiver on loopback,
  // partner portal links point at this gateway, and usage events go to the emulator's sink
  // (docs/BILLING.md, "Locally"), retried soon after it fails.
  const vars = {
    PLATFORM_BASE_URL: emulatorUrl,
    WEBHOOK_LOCAL_TARGETS: 'allow',
    PORTAL_ORIGIN: gatewayUrl,
    USAGE_SINK_URL: `${emulatorUrl}/__emulator/usage/main`,
    USAGE_RETRY_BASE_S: '2',
    ...opts.vars,
  };
  const gateway = spawn(
    'wrangler',
    [
      'dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(opts.gatewayPort),
      '--persist-to',
      opts.persistTo ?? '.wrangler/state',
      '--show-interactive-dev-session=false',
      '--log-level',
      opts.quiet ? 'error' : 'log',
      ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`]),
    ],
    // Offline: no metrics, no fetch of Cloudflare's request.cf sample (a placeholder is used),
    // and no banner, whose update check asks registry.npmjs.org for wrangler's latest version.
    {
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: 'false',
        CLOUDFLARE_CF_FETCH_ENABLED: 'false',
        WRANGLER_HIDE_BANNER: 'true',
      },
      stdio: ['ignore', opts.output ? 'pipe' : io, opts.output ? 'pipe' : io],
      detached: true,
    },
  );
  if (opts.output) {
    for (const stream of [gateway.stdout, gateway.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', opts.output);
    }
  }

  const stop = async () => {
    await Promise.all([terminate(gateway), terminate(emulator)]);
  };
  try {
    await waitUntilUp(`${emulatorUrl}/__emulator/health`, emulator, 'emulator');
    await waitUntilUp(`${gatewayUrl}/healthz`, gateway, 'gateway (wrangler dev)');
  } catch (err) {
    await stop();
    throw err;
  }
  return { gatewayUrl, emulatorUrl, adminToken: secrets.ADMIN_TOKEN!, stop };
}

/** Any HTTP answer means the server is listening. */
async function waitUntilUp(
  url: string,
  child: ChildProcess,
  name: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`${name} did not start within ${timeoutMs / 1000} s (${url})`);
}

/** Children run in their own process group, so wrangler's and tsx's own children stop too. */
function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return Promise.resolve();
  const group = -child.pid;
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(group, sig);
    } catch {
      // Already gone.
    }
  };
  return new Promise((resolve) => {
    const timer = setTimeout(() => signal('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      signal('SIGKILL');
      resolve();
    });
    signal('SIGTERM');
  });
}

/** Creates a tenant through the operator API; returns its id and token. */
export async function createTenant(stack: Stack, name: string, platformKey: string) {
  const admin = adminClient(stack.gatewayUrl, {
    headers: { authorization: `Bearer ${stack.adminToken}` },
  });
  const res = await admin.tenants.$post({ json: { name, platform_key: platformKey } });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`creating tenant failed: HTTP ${res.status} ${body.msg}`);
  return body.data;
}
