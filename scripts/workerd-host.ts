/**
 * Serves Workers on plain workerd through the `miniflare` package, without
 * `wrangler dev` and its proxy in front:
 *
 * - `startGateway()`: the gateway, built exactly as `wrangler deploy` would
 *   (`wrangler deploy --dry-run --outdir …`), with the bindings of
 *   wrangler.toml (read by wrangler itself, so a new binding there is picked
 *   up), fresh secrets, KV / Durable Object / cache state in a temp dir;
 * - `startBareWorker()`: a bare forwarding Worker (one route, a fixed
 *   platform key, fetch upstream, stream the body back) on the same runtime,
 *   the baseline of `npm run bench`.
 *
 * Each runs in its own workerd process on 127.0.0.1, by default on a socket
 * straight to the Worker (no Miniflare entry Worker in between), and records every line
 * workerd prints (`logs()`), so a test can assert that no warning such as
 * "different request context" appeared. Used by `npm run bench` and by
 * test/node/workerd-host.test.ts.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { buildSync } from 'esbuild';
import {
  compileModuleRules,
  convertV4MiniflareOptions,
  Log,
  LogLevel,
  Miniflare,
  testRegExps,
  type V4MiniflareOptions,
  type V4ModuleDefinition,
  type V4ModuleRule,
  type V4WorkerOptions,
} from 'miniflare';
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from 'wrangler';
import { freePort } from './free-port';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_CONFIG = path.join(ROOT, 'wrangler.toml');
/** workerd's output is captured up to this many lines (the oldest are dropped first). */
const MAX_LOG_LINES = 50_000;

/** One line workerd printed (a Worker's console output, a runtime warning, …) or a Miniflare warning. */
export interface LogLine {
  /** workerd's level (`log`, `info`, `warn`, `error`, …); `mf:<level>` for Miniflare's own messages. */
  level: string;
  message: string;
}

export interface WorkerHost {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  /** With `replicas`: the URL of each gateway Worker, `url` first. */
  urls: string[];
  /** Every line printed so far (at most the last 50 000). */
  logs(): LogLine[];
  /** Stops workerd and removes the state directory if this module made it. */
  stop(): Promise<void>;
}

export interface GatewayHost extends WorkerHost {
  /** The operator API token (`Authorization: Bearer …` on /admin). */
  adminToken: string;
  keyEncryptionKey: string;
  /** With `console: true`: the console Worker's origin. */
  consoleUrl?: string;
}

/** The gateway as `wrangler deploy` would upload it. */
export interface GatewayBundle {
  dir: string;
  /** The entry module, `<dir>/index.js`. */
  main: string;
  /** Removes `dir`. */
  remove(): void;
}

interface CommonOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Opens workerd's V8 inspector on this port (CPU profiles of the Worker). */
  inspectorPort?: number;
  /**
   * `direct` (default): the port is a workerd socket straight to the Worker, as plain as
   * workerd gets. `entry`: through Miniflare's entry Worker (routing, `request.cf`, pretty
   * error pages), one more Worker hop per request, as `wrangler dev` and `dispatchFetch` use.
   */
  via?: 'direct' | 'entry';
  /** Called with each line as it is printed, e.g. to echo it. */
  onLog?: (line: LogLine) => void;
}

export interface GatewayOptions extends CommonOptions {
  /** The upstream platform, e.g. the emulator's URL. */
  platformBaseUrl: string;
  /** Further Worker vars (scenario settings); they override wrangler.toml's. */
  vars?: Record<string, string>;
  /** Default: a fresh random token. */
  adminToken?: string;
  /** Default: `k1:` + base64 of 32 fresh random bytes. */
  keyEncryptionKey?: string;
  /** A bundle from `buildGatewayBundle()`, to share one build between gateways; default: build one (and remove it on stop). */
  bundle?: GatewayBundle;
  /** Default: wrangler.toml at the repository root. */
  configPath?: string;
  /** KV, Durable Object and cache state; default: a fresh temp dir, removed on stop. */
  persistDir?: string;
  /**
   * Serve wrangler.toml's `[assets]` (default true). Miniflare serves them
   * through an asset router Worker and a proxy in front of the gateway: two
   * more hops per request, which Cloudflare's edge does not make (it matches
   * assets before a Worker runs), and a proxy that drops `connect`. The bench
   * and the CONNECT test measure the gateway itself, without them.
   */
  staticAssets?: boolean;
  /**
   * More gateway Workers in the same workerd process (default 0): separate
   * isolates, as in separate Cloudflare machines, sharing the first one's KV
   * and Durable Objects (TenantGuards, brokers). Each has its own socket.
   */
  replicas?: number;
  /**
   * Also serve the console Worker (console/wrangler.toml) on its own socket,
   * bound to this gateway's OperatorApi entrypoint, as in production behind
   * Cloudflare Access (docs/DEPLOY.md). Its URL is `consoleUrl`.
   */
  console?: boolean;
}

export interface BareWorkerOptions extends CommonOptions {
  /** Where to forward, e.g. the emulator's URL. */
  upstreamUrl: string;
  /** The platform key sent upstream on every request. */
  platformKey: string;
  /** The one route forwarded (GET, query string kept); anything else is a 404. Default `/team/lists`. */
  route?: string;
  /** The header that carries the key. Default `authorization`. */
  keyHeader?: string;
  /** Compatibility date and flags are wrangler.toml's, so both Workers run alike. */
  configPath?: string;
}

/**
 * Builds the gateway exactly as deploy would, offline: `wrangler deploy
 * --dry-run --outdir <dir>` (default dir: a fresh temp dir).
 */
export async function buildGatewayBundle(
  opts: {
    outDir?: string;
    configPath?: string;
    /** false: keep names and module comments (CPU profiles, scripts/bench/profile.ts); default: wrangler.toml's. */
    minify?: boolean;
  } = {},
): Promise<GatewayBundle> {
  const dir = opts.outDir ?? mkdtempSync(path.join(os.tmpdir(), 'gateway-bundle-'));
  const wrangler = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  const args = [
    wrangler,
    'deploy',
    '--dry-run',
    '--outdir',
    dir,
    '--config',
    opts.configPath ?? DEFAULT_CONFIG,
    ...(opts.minify === false ? ['--no-minify'] : []),
  ];
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      {
        cwd: ROOT,
        // Offline: no metrics; the hidden banner also skips wrangler's update check.
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_HIDE_BANNER: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        err
          ? reject(
              new Error(`wrangler deploy --dry-run failed: ${err.message}\n${stdout}${stderr}`),
            )
          : resolve(),
    );
  });
  return {
    dir,
    main: path.join(dir, 'index.js'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The gateway on plain workerd, bindings from wrangler.toml, state in a temp dir. */
export async function startGateway(opts: GatewayOptions): Promise<GatewayHost> {
  const configPath = opts.configPath ?? DEFAULT_CONFIG;
  const adminToken = opts.adminToken ?? randomBytes(24).toString('base64url');
  const keyEncryptionKey = opts.keyEncryptionKey ?? `k1:${randomBytes(32).toString('base64')}`;
  const ownBundle = opts.bundle === undefined;
  const bundle = opts.bundle ?? (await buildGatewayBundle({ configPath }));
  const ownState = opts.persistDir === undefined;
  const persistDir = opts.persistDir ?? mkdtempSync(path.join(os.tmpdir(), 'gateway-state-'));
  const cleanup = () => {
    if (ownBundle) bundle.remove();
    if (ownState) rmSync(persistDir, { recursive: true, force: true });
  };

  try {
    // Partner portal links point at this gateway: its port is chosen now to name it.
    const port = opts.port ?? (await freePort());
    const portalOrigin = { PORTAL_ORIGIN: `http://127.0.0.1:${port}` };
    // wrangler.toml's bindings, vars and compatibility settings, as `wrangler dev` would set them up.
    const fromConfig = configWorkerOptions(configPath);
    const { modulesRules, assets, ...workerOptions } = fromConfig.workerOptions;
    const gateway: V4WorkerOptions = {
      ...workerOptions,
      name: 'gateway',
      ...(opts.staticAssets === false ? {} : { assets }),
      // Paths in wrangler.toml are relative to its directory; the modules' paths are absolute.
      rootPath: path.dirname(path.resolve(configPath)),
      modulesRoot: bundle.dir,
      modules: bundleModules(bundle, modulesRules ?? []),
      bindings: {
        ...fromConfig.workerOptions.bindings,
        PLATFORM_BASE_URL: opts.platformBaseUrl,
        ADMIN_TOKEN: adminToken,
        KEY_ENCRYPTION_KEY: keyEncryptionKey,
        ...portalOrigin,
        ...opts.vars,
      },
    };
    const replicas = Array.from({ length: opts.replicas ?? 0 }, (_, i) =>
      replicaOf(gateway, `gateway-${i + 1}`),
    );
    const consoleWorker = opts.console ? [consoleWorkerOptions()] : [];
    const host = await serve(
      [gateway, ...fromConfig.externalWorkers, ...replicas, ...consoleWorker],
      { ...opts, port },
      persistDir,
      () => cleanup(),
      [...replicas, ...consoleWorker].map((r) => r.name ?? ''),
    );
    return {
      ...host,
      adminToken,
      keyEncryptionKey,
      ...(opts.console ? { consoleUrl: host.urls.at(-1) } : {}),
    };
  } catch (err) {
    cleanup();
    throw err;
  }
}

const CONSOLE_CONFIG = path.join(ROOT, 'console', 'wrangler.toml');

/** The console Worker, bundled in memory, with its assets and its binding to the gateway's entrypoint. */
function consoleWorkerOptions(): V4WorkerOptions {
  const { workerOptions } = configWorkerOptions(CONSOLE_CONFIG);
  const main = path.join(ROOT, 'console', 'src', 'index.ts');
  const { outputFiles } = buildSync({
    entryPoints: [main],
    bundle: true,
    format: 'esm',
    write: false,
  });
  return {
    name: 'console',
    compatibilityDate: workerOptions.compatibilityDate,
    compatibilityFlags: workerOptions.compatibilityFlags,
    assets: workerOptions.assets,
    rootPath: path.dirname(CONSOLE_CONFIG),
    modules: [
      {
        type: 'ESModule',
        path: main.replace(/\.ts$/, '.js'),
        contents: outputFiles[0]?.text ?? '',
      },
    ],
    serviceBindings: { GATEWAY: { name: 'gateway', entrypoint: 'OperatorApi' } },
  };
}

/** Another gateway Worker bound to the first one's Durable Object classes (and the same KV ids). */
function replicaOf(gateway: V4WorkerOptions, name: string): V4WorkerOptions {
  const objects: Record<string, { className: string; scriptName: string }> = {};
  for (const [binding, target] of Object.entries(gateway.durableObjects ?? {})) {
    const className = typeof target === 'string' ? target : target.className;
    objects[binding] = { className, scriptName: gateway.name ?? 'gateway' };
  }
  // A queue has one consumer Worker (the first): replicas produce to it, as isolates do.
  const { assets: _assets, queueConsumers: _consumers, ...rest } = gateway;
  return { ...rest, name, durableObjects: objects };
}

/**
 * What `wrangler dev` would give Miniflare for this config: bindings, vars,
 * compatibility date and flags, module rules. wrangler.toml only: wrangler
 * would also read `.dev.vars` or `.env` beside it, but the host sets the
 * secrets itself, so a local file cannot change what runs (or is measured).
 */
function configWorkerOptions(configPath: string) {
  const config = unstable_readConfig({ config: configPath });
  // wrangler looks for .dev.vars and .env beside `userConfigPath`: point it at an empty directory.
  const empty = mkdtempSync(path.join(os.tmpdir(), 'no-dev-vars-'));
  try {
    const { workerOptions, externalWorkers } = unstable_getMiniflareWorkerOptions({
      ...config,
      userConfigPath: path.join(empty, 'wrangler.toml'),
    });
    // wrangler declares them as Omit<V4WorkerOptions, …>, which loses the field types
    // (V4WorkerOptions has an index signature); they are V4 worker options without a script.
    return {
      workerOptions: workerOptions as V4WorkerOptions & { modulesRules?: V4ModuleRule[] },
      externalWorkers,
    };
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
}

/**
 * Every module of the bundle, the entry first, typed by wrangler.toml's module
 * rules (as `wrangler deploy` uploads them); `.js`/`.mjs` are ES modules.
 */
function bundleModules(bundle: GatewayBundle, rules: V4ModuleRule[]): V4ModuleDefinition[] {
  const compiled = compileModuleRules(rules);
  const files = readdirSync(bundle.dir, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile())
    .map((f) => path.join(f.parentPath, f.name))
    .filter((file) => file !== bundle.main && !/\.(map|md)$/.test(file));
  const modules: V4ModuleDefinition[] = [{ type: 'ESModule', path: bundle.main }];
  for (const file of files) {
    const rel = path.relative(bundle.dir, file);
    const rule = compiled.find((r) => testRegExps(r.include, rel));
    if (rule) modules.push({ type: rule.type, path: file });
    else if (/\.m?js$/.test(file)) modules.push({ type: 'ESModule', path: file });
    else throw new Error(`no module rule matches ${rel} in the gateway bundle`);
  }
  return modules;
}

/**
 * The bare forwarding Worker: the least a Worker that forwards one route can
 * do. Its env: UPSTREAM, ROUTE, KEY_HEADER, PLATFORM_KEY.
 */
const BARE_WORKER = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (request.method !== 'GET' || url.pathname !== env.ROUTE)
      return new Response('{"code":40400,"msg":"Not Found","data":null}', {
        status: 404,
        headers: { 'content-type': 'application/json' },
      });
    const upstream = await fetch(env.UPSTREAM + url.pathname + url.search, {
      headers: { [env.KEY_HEADER]: env.PLATFORM_KEY },
    });
    return new Response(upstream.body, {
      status: upstream.status,
      headers: { 'content-type': upstream.headers.get('content-type') ?? 'application/json' },
    });
  },
};
`;

/**
 * A bare Worker that forwards any GET to the platform with the caller's own key
 * (`Authorization: Bearer <platform key>`, sent on as both headers the platform reads):
 * the control for a scenario of many keys (`npm run chaos`, noisy neighbours). It
 * streams the answer through and checks nothing.
 */
const KEY_PASSING_BARE_WORKER = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = (request.headers.get('authorization') ?? '').replace(/^Bearer\\s+/i, '');
    const upstream = await fetch(env.UPSTREAM + url.pathname + url.search, {
      headers: { authorization: key, 'x-api-key': key },
    });
    return new Response(upstream.body, {
      status: upstream.status,
      headers: { 'content-type': upstream.headers.get('content-type') ?? 'application/json' },
    });
  },
};
`;

export function startKeyPassingBareWorker(
  opts: Omit<BareWorkerOptions, 'platformKey' | 'route' | 'keyHeader'>,
): Promise<WorkerHost> {
  return serveBare(KEY_PASSING_BARE_WORKER, opts, {});
}

/** The bare forwarding Worker on plain workerd, with wrangler.toml's compatibility date and flags. */
export function startBareWorker(opts: BareWorkerOptions): Promise<WorkerHost> {
  return serveBare(BARE_WORKER, opts, {
    ROUTE: opts.route ?? '/team/lists',
    KEY_HEADER: opts.keyHeader ?? 'authorization',
    PLATFORM_KEY: opts.platformKey,
  });
}

/** A bare Worker's `script`, with `UPSTREAM` and `bindings`. */
function serveBare(
  script: string,
  opts: Pick<BareWorkerOptions, 'upstreamUrl' | 'configPath'> & CommonOptions,
  bindings: Record<string, string>,
): Promise<WorkerHost> {
  return startScriptWorker(
    script,
    { UPSTREAM: opts.upstreamUrl.replace(/\/+$/, ''), ...bindings },
    opts,
  );
}

/**
 * A module Worker `script` with text `bindings` (and the Durable Objects it exports, if
 * named) on plain workerd, as the gateway's compatibility date and flags run it, and
 * nothing leaving the machine (bench:steps' and bench:rpc's probe Workers, the bare Workers).
 */
export function startScriptWorker(
  script: string,
  bindings: Record<string, string>,
  opts: {
    configPath?: string;
    durableObjects?: V4WorkerOptions['durableObjects'];
  } & CommonOptions = {},
): Promise<WorkerHost> {
  const { workerOptions } = configWorkerOptions(opts.configPath ?? DEFAULT_CONFIG);
  const worker: V4WorkerOptions = {
    name: 'bare',
    modules: true,
    script,
    compatibilityDate: workerOptions.compatibilityDate,
    compatibilityFlags: workerOptions.compatibilityFlags,
    bindings,
    ...(opts.durableObjects ? { durableObjects: opts.durableObjects } : {}),
  };
  return serve([worker], opts, undefined, () => undefined);
}

/** Starts one workerd process serving `workers` (the first gets the requests) on 127.0.0.1. */
async function serve(
  workers: V4WorkerOptions[],
  opts: CommonOptions,
  persistDir: string | undefined,
  afterStop: () => void,
  alsoDirect: string[] = [],
): Promise<WorkerHost> {
  const lines: LogLine[] = [];
  const record = (line: LogLine) => {
    lines.push(line);
    // Trimmed a tenth at a time: one splice per line would move 50 000 entries per line.
    if (lines.length > MAX_LOG_LINES * 1.1) lines.splice(0, lines.length - MAX_LOG_LINES);
    opts.onLog?.(line);
  };
  const direct = (opts.via ?? 'direct') === 'direct';
  const [first, ...others] = workers;
  if (!first) throw new Error('no Worker to serve');
  const rest = others.map((w) =>
    w.name && alsoDirect.includes(w.name)
      ? { ...w, unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }] }
      : w,
  );
  const options: V4MiniflareOptions = {
    host: '127.0.0.1',
    // With a direct socket, Miniflare's own entry socket still exists, on any free port.
    port: direct ? 0 : (opts.port ?? 0),
    workers: [
      direct
        ? { ...first, unsafeDirectSockets: [{ host: '127.0.0.1', port: opts.port ?? 0 }] }
        : first,
      ...rest,
    ],
    // Every line workerd prints (structured or not) arrives here instead of on our console.
    handleStructuredLogs: ({ level, message }) => record({ level, message }),
    log: new RecordingLog((level, message) => record({ level: `mf:${level}`, message })),
    // No per-request log line (it costs a subrequest back to Node), no dev registry, no
    // fetch of a real `request.cf` (a placeholder is used): nothing leaves the machine.
    logRequests: false,
    cf: false,
    telemetry: { enabled: false },
    ...(persistDir ? { resourcePersistencePath: persistDir } : {}),
    ...(opts.inspectorPort ? { inspectorPort: opts.inspectorPort } : {}),
  };
  const mf = new Miniflare(convertV4MiniflareOptions(options));
  let url: URL;
  const urls: string[] = [];
  try {
    url = await mf.ready;
    if (direct) url = await mf.unsafeGetDirectURL(first.name);
    urls.push(url.origin);
    for (const name of alsoDirect) urls.push((await mf.unsafeGetDirectURL(name)).origin);
  } catch (err) {
    await mf.dispose().catch(() => undefined);
    afterStop();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: url.origin,
    urls,
    logs: () => lines.slice(-MAX_LOG_LINES),
    stop: () => {
      stopped ??= mf.dispose().finally(afterStop);
      return stopped;
    },
  };
}

/** Miniflare's own messages (warnings and errors), recorded rather than printed. */
class RecordingLog extends Log {
  constructor(private readonly sink: (level: string, message: string) => void) {
    super(LogLevel.WARN);
  }

  override logWithLevel(level: LogLevel, message: string): void {
    if (level <= this.level)
      this.sink(LogLevel[level]?.toLowerCase() ?? String(level), stripVTControlCharacters(message));
  }

  override error(message: Error): void {
    this.sink('error', message.stack ?? message.message);
  }
}
