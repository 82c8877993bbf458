/**
 * What `npm run deploy` refuses to deploy, as pure functions of the resolved
 * wrangler config (the fields read here are a subset of wrangler's `Config`),
 * the Worker's secret names and the bundle size. Every refusal is one line
 * that says what is wrong and what to do. Tested in test/node/deploy.test.ts.
 */
import { isIP } from 'node:net';

export const REQUIRED_SECRETS = ['ADMIN_TOKEN', 'KEY_ENCRYPTION_KEY'] as const;
/** The id wrangler.toml ships with: `npm start` and the tests use local KV, whatever the id. */
export const PLACEHOLDER_KV_ID = '00000000000000000000000000000000';
/** Durable Object bindings the gateway needs; wrangler does not inherit them into an environment. */
export const REQUIRED_DURABLE_OBJECTS = [
  { name: 'TENANT_GUARD', class_name: 'TenantGuard' },
  { name: 'AUDIT_LOG', class_name: 'AuditLog' },
] as const;

type Route =
  | string
  | { pattern: string; custom_domain?: boolean; zone_id?: string; zone_name?: string };

/** The parts of wrangler's resolved config (`unstable_readConfig`) the checks read. */
export interface DeployConfig {
  vars?: Record<string, unknown>;
  kv_namespaces?: { binding: string; id?: string }[];
  durable_objects?: { bindings: { name: string; class_name: string }[] };
  routes?: Route[];
  route?: Route;
  /** Other bindings (ratelimits, services, …), compared with the top level's. */
  [field: string]: unknown;
}

export interface CheckOptions {
  /** The environment's name, for the messages. Default `production`. */
  env?: string;
  /** The top-level config: every binding it has must be in the environment too. */
  topLevel?: DeployConfig;
}

/** Binding fields wrangler does not inherit into an environment; an entry's name is `binding` or `name`. */
const BINDING_FIELDS = [
  'kv_namespaces',
  'durable_objects.bindings',
  'ratelimits',
  'services',
  'r2_buckets',
  'd1_databases',
  'queues.producers',
  'analytics_engine_datasets',
  'hyperdrive',
  'vectorize',
  'workflows',
  'dispatch_namespaces',
  'mtls_certificates',
  'send_email',
  'secrets_store_secrets',
  'worker_loaders',
  'vpc_services',
  'pipelines',
  'ai',
  'browser',
  'images',
  'version_metadata',
];

/** `field name` for every binding of the config (e.g. `ratelimits PREAUTH_LIMITER`). */
export function bindingNames(config: DeployConfig): string[] {
  const names: string[] = [];
  for (const field of BINDING_FIELDS) {
    const value = field
      .split('.')
      .reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], config);
    const entries = Array.isArray(value)
      ? value
      : value && typeof value === 'object'
        ? [value]
        : [];
    for (const entry of entries as { binding?: string; name?: string }[]) {
      const name = entry.binding ?? entry.name;
      if (name) names.push(`${field} ${name}`);
    }
  }
  return names;
}

/** Vars set at the top level that the environment does not set (it gets the gateway's defaults). */
export function varsNotInEnv(topLevel: DeployConfig, config: DeployConfig): string[] {
  return Object.keys(topLevel.vars ?? {}).filter((name) => !(name in (config.vars ?? {})));
}

export type CheckName = 'platform_url' | 'kv_namespace' | 'secrets' | 'custom_domain' | 'bindings';

export interface Refusal {
  check: CheckName;
  /** One line, for the operator. */
  message: string;
}

/**
 * Everything that would make a deployed gateway broken or slower than it
 * should be. `secrets`: the names the Worker has (`wrangler secret list`), or
 * `null` when they cannot be known (a dry run touches no account).
 */
export function checkDeployConfig(
  config: DeployConfig,
  secrets: readonly string[] | null,
  opts: CheckOptions = {},
): Refusal[] {
  const env = opts.env ?? 'production';
  const section = `[env.${env}]`;
  const refusals: Refusal[] = [];
  const platformUrl = checkPlatformUrl(config.vars?.PLATFORM_BASE_URL);
  if (platformUrl) refusals.push({ check: 'platform_url', message: platformUrl });

  const kv = config.kv_namespaces?.find((ns) => ns.binding === 'TENANTS');
  const create = `run \`npm run deploy -- --env ${env}\` (without --dry-run) to create or reuse it, or write your namespace's id there`;
  if (!kv) {
    refusals.push({
      check: 'kv_namespace',
      message: `KV namespace binding TENANTS is missing from ${section}: wrangler does not inherit bindings into an environment`,
    });
  } else if (!kv.id) {
    refusals.push({
      check: 'kv_namespace',
      message: `KV namespace TENANTS has no id in ${section}: ${create}`,
    });
  } else if (/^0+$/.test(kv.id)) {
    refusals.push({
      check: 'kv_namespace',
      message: `KV namespace TENANTS has the placeholder id ${kv.id} in ${section}: ${create}`,
    });
  } else if (!/^[0-9a-f]{32}$/i.test(kv.id)) {
    refusals.push({
      check: 'kv_namespace',
      message: `KV namespace TENANTS has id "${kv.id}" in ${section}, which is not a KV namespace id (32 hex digits)`,
    });
  }

  for (const want of REQUIRED_DURABLE_OBJECTS) {
    const got = config.durable_objects?.bindings.find((b) => b.name === want.name);
    if (got?.class_name !== want.class_name) {
      refusals.push({
        check: 'bindings',
        message: `Durable Object binding ${want.name} (class ${want.class_name}) is missing from ${section}: wrangler does not inherit bindings into an environment`,
      });
    }
  }

  if (opts.topLevel) {
    const here = new Set(bindingNames(config));
    for (const binding of bindingNames(opts.topLevel).filter((b) => !here.has(b))) {
      const [field, name] = binding.split(' ');
      if (
        field === 'durable_objects.bindings' &&
        REQUIRED_DURABLE_OBJECTS.some((d) => d.name === name)
      )
        continue;
      refusals.push({
        check: 'bindings',
        message: `binding ${name} (${field}) is in the top-level config but not in ${section}: wrangler does not inherit bindings into an environment; add it there`,
      });
    }
  }

  if (secrets !== null) {
    const missing = REQUIRED_SECRETS.filter((name) => !secrets.includes(name));
    if (missing.length > 0) {
      refusals.push({
        check: 'secrets',
        message: `secrets missing on the ${env} Worker: ${missing.join(', ')}; \`npm run deploy -- --env ${env}\` generates and puts them (or \`wrangler secret put <NAME> --env ${env}\`)`,
      });
    }
  }

  const targets = [...(config.routes ?? []), ...(config.route ? [config.route] : [])];
  const served = targets.filter((r) => !hostOf(r).endsWith('.workers.dev'));
  if (served.length === 0) {
    refusals.push({
      check: 'custom_domain',
      message: `no custom domain or route in ${section}: the Cache API does nothing on *.workers.dev, so the gateway's second cache tier (L2, shared per data center) would be off; pass --domain gw.example.com or --route 'gw.example.com/*'`,
    });
  }
  return refusals;
}

/** Why this cannot be the deployed gateway's PLATFORM_BASE_URL, or undefined when it can. */
export function checkPlatformUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    return 'PLATFORM_BASE_URL is not set: pass --platform-url https://platform.example.com (the real platform)';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `PLATFORM_BASE_URL "${value}" is not a URL: pass --platform-url https://platform.example.com`;
  }
  if (isPrivateHost(url.hostname)) {
    return `PLATFORM_BASE_URL ${url.origin} is a loopback, private or local address: a deployed Worker cannot reach it; set the real platform's https URL`;
  }
  if (url.protocol !== 'https:') {
    return `PLATFORM_BASE_URL ${url.origin} is not https: every tenant's platform key would cross the internet unencrypted`;
  }
  if (url.username || url.password) {
    return 'PLATFORM_BASE_URL must not carry a user name or password: Worker vars are not secret';
  }
  return undefined;
}

/**
 * Loopback, unspecified, private (RFC 1918, unique local), shared (CGNAT),
 * link-local, and names reserved for local use (`localhost`, `.local`,
 * `.internal`, `.home.arpa`). `hostname` as `URL` gives it: lower case, IPv4
 * in dotted form (so `2130706433` is already `127.0.0.1`), IPv6 in brackets.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (isIP(host) === 4) return isPrivateIPv4(host);
  if (isIP(host) === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1] ?? fromHexMapped(host);
    if (mapped) return isPrivateIPv4(mapped);
    if (host === '::1' || host === '::') return true;
    const first = Number.parseInt(host.split(':')[0] || '0', 16);
    return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80; // fc00::/7, fe80::/10
  }
  return (
    host === 'localhost' ||
    /\.(localhost|local|internal|home\.arpa|lan)$/.test(host) ||
    !host.includes('.') // a bare name only resolves on a local network
  );
}

function isPrivateIPv4(ip: string): boolean {
  const [a = 0, b = 0] = ip.split('.').map(Number);
  return (
    a === 0 || // 0.0.0.0/8
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // 100.64.0.0/10, shared address space
    (a === 169 && b === 254) || // link-local
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  );
}

/** `::ffff:7f00:1` (how URL writes an IPv4-mapped address) as `127.0.0.1`. */
function fromHexMapped(host: string): string | undefined {
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!m) return undefined;
  const hi = Number.parseInt(m[1]!, 16);
  const lo = Number.parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function hostOf(route: Route): string {
  const pattern = typeof route === 'string' ? route : route.pattern;
  return pattern
    .replace(/^https?:\/\//, '')
    .split('/')[0]!
    .toLowerCase();
}

/**
 * A custom domain for `--domain`: a plain host name (no scheme, path,
 * wildcard or port), not on workers.dev. Undefined when fine.
 */
export function checkDomain(domain: string): string | undefined {
  if (
    !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/i.test(
      domain,
    )
  ) {
    return `--domain must be a host name such as gw.example.com (no scheme, path or port), got "${domain}"`;
  }
  if (domain.toLowerCase().endsWith('.workers.dev')) {
    return `--domain ${domain} is on workers.dev, where the Cache API does nothing: use a domain of a zone on your account`;
  }
  return undefined;
}

/**
 * A route for `--route`: `host/*` (the host may start with `*.`). The gateway
 * serves the platform's paths from the root, so a route under a path prefix
 * (`example.com/api/*`) would hand it paths it does not know.
 */
export function checkRoute(route: string): string | undefined {
  const m = /^(\*\.)?([^/*\s]+)\/\*$/.exec(route);
  if (!m || checkDomain(m[2]!)?.startsWith('--domain must')) {
    return `--route must look like gw.example.com/* (the gateway serves the platform's paths from the root), got "${route}"`;
  }
  if (m[2]!.toLowerCase().endsWith('.workers.dev')) {
    return `--route ${route} is on workers.dev, where the Cache API does nothing: use a zone on your account`;
  }
  return undefined;
}

/** The bundle budget (KiB, uncompressed main module); undefined when within it. */
export function checkBundleSize(bytes: number, budgetKiB: number): string | undefined {
  const kib = bytes / 1024;
  if (kib <= budgetKiB) return undefined;
  return `the bundle is ${kib.toFixed(1)} KiB, over the budget of ${budgetKiB} KiB (package.json "config": {"bundleBudgetKiB"})`;
}
