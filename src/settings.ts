/**
 * Settings come from Worker vars and secrets. They are parsed once per env
 * object with zod; a bad value fails every request with a 500 envelope that
 * names the setting (never its value: ADMIN_TOKEN is a secret).
 */
import * as z from 'zod';
import { GatewayError } from './errors';
import { log } from './log';
import { DEFAULT_LIMITS, limitsSchema, SELF_SERVICE_PER_MINUTE } from './metering/policy';
import { DEFAULT_USAGE_RETENTION_DAYS } from './metering/usage';
import { oncePer } from './once-per';
import { catalogOf } from './operations/catalog';
import { platformOperationsSchema } from './operations/declared';
import { operationOverridesSchema } from './operations/overrides';
import type { Bindings } from './types/context';
import type { Settings } from './types/settings';

const intSetting = (min: number, max: number, fallback: number) =>
  z.preprocess(
    (v) => (v === undefined || v === '' ? undefined : typeof v === 'string' ? Number(v) : v),
    z.number().int().min(min).max(max).default(fallback),
  );

/** A number setting's text as a number; blank is unset. */
const asNumber = (v: unknown) => (v === undefined || v === '' ? undefined : Number(v));

const ratioSetting = (fallback: number, max = 1) =>
  z.preprocess(
    asNumber,
    z
      .number({ error: 'must be a number' })
      .min(0, `must be from 0 to ${max}`)
      .max(max, `must be from 0 to ${max}`)
      .default(fallback),
  );

/** A comma-separated list (blank entries dropped); unset: empty. */
const listSetting = () =>
  z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    );

const jsonSetting = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    if (v.trim() === '') return undefined;
    try {
      return JSON.parse(v);
    } catch {
      return Symbol('invalid JSON');
    }
  }, schema);

/** What a platform key looks like, to mask it wherever it shows up (docs/SECURITY.md, "Platform secrets are masked"). */
export const DEFAULT_PLATFORM_KEY_PATTERN = 'sk-[A-Za-z0-9_-]{16,}';

/**
 * Tokens issued before keyed tags (tenants/token.ts) are accepted until this
 * UTC day begins: the migration window (docs/SECURITY.md, "Gateway tokens").
 */
const LEGACY_TOKENS_DEFAULT_UNTIL = '2027-03-01';

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

/** An optional origin setting: blank is unset; `read` makes the origin from the text, or throws. */
const originSetting = (read: (text: string) => string, message: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const text = v?.trim();
      if (!text) return undefined;
      try {
        return read(text);
      } catch {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
    });

/** The URL's origin, if it is nothing more (no path, query, fragment or credentials); else throws. */
function bareOrigin(url: URL): string {
  if (url.pathname !== '/' || url.search || url.hash || url.username) throw new Error();
  return url.origin;
}

/**
 * PORTAL_ORIGIN: the gateway's public origin (`https://gw.example.com`), where
 * partner portal links point (docs/CONSOLE.md, "Partner portal"). Needed when
 * the operator API is reached on another hostname (the console Worker's); an
 * origin only, https, or http for loopback.
 */
const portalOrigin = originSetting((text) => {
  const url = new URL(text);
  const plainOk = url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname);
  if (url.protocol !== 'https:' && !plainOk) throw new Error();
  return bareOrigin(url);
}, 'must be an origin such as https://gw.example.com (http only for loopback)');

/**
 * ACCESS_TEAM_DOMAIN: `myteam.cloudflareaccess.com` or its https origin. A
 * loopback http origin (npm start's local Access) only with ACCESS_LOCAL_ISSUER=allow,
 * checked below, so a deployed gateway never trusts keys from plain http.
 */
const accessTeamDomain = originSetting(
  (text) => bareOrigin(new URL(/^https?:\/\//.test(text) ? text : `https://${text}`)),
  'must be a team domain such as myteam.cloudflareaccess.com',
);

const roleList = z.array(z.string().trim().min(1)).max(1000).default([]);
const accessRoles = z
  .strictObject(
    { admin: roleList, viewer: roleList },
    { error: 'must be {"admin": [...], "viewer": [...]}' },
  )
  .default({ admin: [], viewer: [] });

/**
 * What it makes is declared in types/settings.ts: a setting added here is added there too,
 * and documented in docs/CONFIGURATION.md (test/node/docs.test.ts reads these keys).
 */
export const settingsSchema = z
  .object({
    PLATFORM_BASE_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .transform((url) => url.replace(/\/+$/, '')),
    ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    ACCESS_TEAM_DOMAIN: accessTeamDomain,
    ACCESS_AUD: listSetting(),
    ACCESS_ROLES: jsonSetting(accessRoles),
    ACCESS_LOCAL_ISSUER: z
      .enum(['allow', 'refuse'], { error: 'must be allow or refuse' })
      .default('refuse')
      .transform((v) => v === 'allow'),
    KEY_ENCRYPTION_KEY: z
      .string({ error: 'is required: kid:base64 of 32 random bytes (openssl rand -base64 32)' })
      .regex(
        /^[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/_-]{43}=?(,\s*[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/_-]{43}=?)*$/,
        'must be kid:base64 of 32 bytes, comma-separated',
      ),
    UPSTREAM_TIMEOUT_MS: intSetting(1, 300_000, 30_000),
    PLATFORM_AUTH_SCHEME: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'must be a single word such as Bearer, or empty')
      .or(z.literal(''))
      .default(''),
    ROUTE_OVERRIDES: jsonSetting(operationOverridesSchema.default({})),
    PLATFORM_OPERATIONS: jsonSetting(platformOperationsSchema.default([])),
    TENANT_MEMO_TTL_MS: intSetting(0, 300_000, 10_000),
    MAX_BODY_BYTES: intSetting(1, 10 * 1024 * 1024, 64 * 1024),
    // One file as large as the platform's client sends (10 MiB), and room for the parts'
    // headers; Cloudflare refuses bodies above 100 MB on Free and Pro zones anyway.
    MAX_UPLOAD_BYTES: intSetting(1024, 100 * 1024 * 1024, 10 * 1024 * 1024 + 64 * 1024),
    DEFAULT_LIMITS: jsonSetting(limitsSchema.default(DEFAULT_LIMITS)),
    LIMITS_ENABLED: z
      .enum(['true', 'false'], { error: 'must be true or false' })
      .default('true')
      .transform((v) => v === 'true'),
    LEASE_MAX_MS: intSetting(10, 10_000, 1000),
    // Regional lease brokers (docs/LIMITS.md, "Hierarchical leases").
    LEASE_BROKERS: z
      .enum(['on', 'off'], { error: 'must be on or off' })
      .default('on')
      .transform((v) => v === 'on'),
    BROKER_LEASE_MS: intSetting(100, 60_000, 5000),
    L1_CACHE_BYTES: intSetting(0, 128 * 1024 * 1024, 8 * 1024 * 1024),
    USAGE_RETENTION_DAYS: intSetting(1, 3650, DEFAULT_USAGE_RETENTION_DAYS),
    USAGE_HISTORY: z
      .enum(['on', 'off'], { error: 'must be on or off' })
      .default('on')
      .transform((v) => v === 'on'),
    // A quiet tenant's last usage batch is sent by a timer (docs/OBSERVABILITY.md).
    USAGE_FLUSH_TIMER: z
      .enum(['on', 'off'], { error: 'must be on or off' })
      .default('on')
      .transform((v) => v === 'on'),
    LOG_SAMPLE_RATE: ratioSetting(1),
    PLATFORM_KEY_PATTERN: z
      .string()
      .default(DEFAULT_PLATFORM_KEY_PATTERN)
      .transform((source, ctx) => {
        try {
          return new RegExp(source, 'g');
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a regular expression' });
          return z.NEVER;
        }
      }),
    LIMITER_FAILURE_MODE: z
      .enum(['closed', 'open'], { error: 'must be closed or open' })
      .default('closed'),
    OPERATOR_API: z
      .enum(['public', 'binding'], { error: 'must be public or binding' })
      .default('public'),
    PORTAL_ORIGIN: portalOrigin,
    WS_QUERY_TOKENS: z
      .enum(['browser', 'all'], { error: 'must be browser or all' })
      .default('browser'),
    WEBHOOK_LOCAL_TARGETS: z
      .enum(['allow', 'refuse'], { error: 'must be allow or refuse' })
      .default('refuse')
      .transform((v) => v === 'allow'),
    LEGACY_TOKENS_UNTIL: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD')
      .default(LEGACY_TOKENS_DEFAULT_UNTIL)
      .transform((day, ctx) => {
        const at = Date.parse(`${day}T00:00:00Z`);
        if (Number.isNaN(at)) ctx.addIssue({ code: 'custom', message: 'must be a real date' });
        return at;
      }),
    // The platform falters (docs/RESILIENCE.md): circuit breaker, retry budget, idempotency keys.
    CIRCUIT_FAILURES: intSetting(1, 1000, 5),
    // Above 1 the ratio never trips the breaker: only failures in a row do.
    CIRCUIT_FAILURE_RATIO: ratioSetting(0.8, 2),
    CIRCUIT_WINDOW_S: intSetting(1, 600, 10),
    CIRCUIT_MIN_CALLS: intSetting(1, 100_000, 20),
    CIRCUIT_COOLDOWN_S: intSetting(1, 600, 5),
    RETRY_BUDGET_RATIO: ratioSetting(0.1),
    RETRY_BUDGET_MIN_PER_S: intSetting(0, 1000, 2),
    MAX_PLATFORM_PAUSE_S: intSetting(1, 3600, 60),
    IDEMPOTENCY_REQUIRED: listSetting(),
    BROWSER_PARTITION_SHARE: z.preprocess(
      asNumber,
      z
        .number({ error: 'must be a number' })
        .gt(0, 'must be above 0')
        .max(1, 'must be at most 1')
        .default(0.5),
    ),
    SELF_SERVICE_PER_MINUTE: intSetting(1, 100_000, SELF_SERVICE_PER_MINUTE),
    // OAuth (docs/OAUTH.md): registration, token lives, how many clients at most.
    OAUTH_REGISTRATION: z.enum(['open', 'off'], { error: 'must be open or off' }).default('open'),
    OAUTH_ACCESS_TOKEN_TTL_S: intSetting(60, 3600, 3600),
    OAUTH_REFRESH_TOKEN_TTL_S: intSetting(3600, 60 * 86_400, 30 * 86_400),
    OAUTH_CLIENTS_MAX: intSetting(1, 1_000_000, 10_000),
    // The usage export (docs/BILLING.md).
    USAGE_EXPORT: z
      .enum(['events', 'aggregate', 'off'], { error: 'must be events, aggregate or off' })
      .default('events'),
    USAGE_SINK_URL: z
      .string()
      .optional()
      .transform((v) => v?.trim() || undefined)
      .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional()),
    USAGE_SINK_KEY_ID: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1..64 of A-Z a-z 0-9 . _ -')
      .default('k1'),
    USAGE_SINK_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    USAGE_SINK_TOKEN: z.string().min(1).max(4096).optional(),
    USAGE_EVENT_SOURCE: z
      .string()
      .regex(/^[\x21-\x7e]{1,200}$/, 'must be 1..200 printable characters, no spaces')
      .default('agent-platform-gateway'),
    USAGE_RETRY_BASE_S: intSetting(1, 3600, 10),
  })
  .superRefine((s, ctx) => {
    // Usage events leave the gateway signed, over https (plain http for local development).
    const sink = s.USAGE_SINK_URL && new URL(s.USAGE_SINK_URL);
    if (sink && (sink.username || sink.password)) {
      ctx.addIssue({
        code: 'custom',
        path: ['USAGE_SINK_URL'],
        message: 'must not carry credentials',
      });
    } else if (sink && sink.protocol !== 'https:' && !s.WEBHOOK_LOCAL_TARGETS) {
      ctx.addIssue({
        code: 'custom',
        path: ['USAGE_SINK_URL'],
        message:
          'must be https (plain http only with WEBHOOK_LOCAL_TARGETS=allow, for local development)',
      });
    }
    // Declared writes may be named too: checked once both settings have parsed.
    const writes = catalogOf(s).writes;
    for (const id of s.IDEMPOTENCY_REQUIRED) {
      if (!writes.includes(id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['IDEMPOTENCY_REQUIRED'],
          message: `${id} is not one of ${writes.join(', ')}`,
        });
      }
    }
    // Behind the console Worker, a link made from the request's own origin would point
    // at the console's hostname, where no partner page is served.
    if (s.OPERATOR_API === 'binding' && !s.PORTAL_ORIGIN) {
      ctx.addIssue({
        code: 'custom',
        path: ['PORTAL_ORIGIN'],
        message: "is required with OPERATOR_API=binding (the gateway's public origin)",
      });
    }
    if (!s.ACCESS_TEAM_DOMAIN) return;
    if (s.ACCESS_AUD.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['ACCESS_AUD'],
        message: 'is required with ACCESS_TEAM_DOMAIN',
      });
    }
    const url = new URL(s.ACCESS_TEAM_DOMAIN);
    if (
      url.protocol === 'http:' &&
      !(s.ACCESS_LOCAL_ISSUER && LOOPBACK_HOSTS.includes(url.hostname))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['ACCESS_TEAM_DOMAIN'],
        message: 'must be https (http only for a loopback address with ACCESS_LOCAL_ISSUER=allow)',
      });
    }
  }) satisfies z.ZodType<Settings>;

/** Names, in a compile error, any setting the schema makes that types/settings.ts does not declare. */
export type UndeclaredSettings = None<
  Exclude<keyof z.output<typeof settingsSchema>, keyof Settings>
>;
type None<T extends never> = T;

/** Parsed once per env object: the settings, or the error every request then answers. */
const parsed = oncePer((env: Bindings): Settings | GatewayError => {
  const out = settingsSchema.safeParse(env);
  return out.success ? out.data : misconfigured(out.error);
});

export function loadSettings(env: Bindings): Settings {
  const result = parsed(env);
  if (result instanceof GatewayError) throw result;
  return result;
}

function misconfigured(error: z.ZodError): GatewayError {
  const problems = error.issues.map((i) => `${i.path.join('.') || 'settings'}: ${i.message}`);
  log.error('settings.invalid', { problems });
  return new GatewayError('MISCONFIGURED', {
    message: `Gateway is misconfigured: ${problems.join('; ')}`,
  });
}
