import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { buildAssets } from './scripts/assets.ts';
import { freePort } from './scripts/free-port.ts';

/**
 * Projects: `workers` runs inside workerd against the emulator (almost
 * everything); `unit` tests pure modules next to their source; `node` drives
 * a real gateway from outside, as the operator CLI and a browser would;
 * `emulator` tests the platform emulator itself, in Node.
 */
/** The usage sink's signing key in tests (not a secret: the emulator checks with it). */
const USAGE_SINK_SECRET = 'test-usage-sink-secret-0123456789abcdef';

export default defineConfig(async () => {
  // wrangler.toml's [assets] directory must exist before the Workers pool reads it.
  buildAssets();
  const port = Number(process.env.EMULATOR_PORT) || (await freePort());
  process.env.EMULATOR_PORT = String(port);
  // The usage export's batches are signed with this; the emulator's sink checks them.
  process.env.EMULATOR_USAGE_SECRET = USAGE_SINK_SECRET;
  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                bindings: {
                  PLATFORM_BASE_URL: `http://127.0.0.1:${port}`,
                  ADMIN_TOKEN: 'test-admin-token-0123456789',
                  // Two keys: tests seal under k2 and can still open values sealed under k1.
                  KEY_ENCRYPTION_KEY: `k2:${'B'.repeat(43)}=,k1:${'A'.repeat(43)}=`,
                  UPSTREAM_TIMEOUT_MS: '2000',
                  // The emulator's webhook receiver is on loopback, over http.
                  WEBHOOK_LOCAL_TARGETS: 'allow',
                  TENANT_MEMO_TTL_MS: '0',
                  // Where portal links point: the tests' own gateway origin (test/helpers.ts).
                  PORTAL_ORIGIN: 'https://gateway.test',
                  // The usage export delivers to the emulator's sink (docs/BILLING.md).
                  USAGE_SINK_URL: `http://127.0.0.1:${port}/__emulator/usage/tests`,
                  USAGE_SINK_SECRET,
                  USAGE_RETRY_BASE_S: '1',
                  // Generous defaults so functional tests never trip them; limit tests set their own.
                  DEFAULT_LIMITS: JSON.stringify({
                    policies: [{ name: 'burst', limit: 100000, window_s: 10 }],
                    quota: {},
                  }),
                },
              },
            }),
          ],
          test: {
            name: 'workers',
            globalSetup: ['./test/setup/emulator.ts', './test/setup/access.ts'],
            include: ['test/*.test.ts'],
            // test/fuzz.test.ts: `npm run fuzz` sets FUZZ_RUNS (and FUZZ_SEED to replay a run).
            provide: {
              fuzz: {
                runs: Number(process.env.FUZZ_RUNS) || 0,
                seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : null,
              },
            },
            testTimeout: 20_000,
          },
        },
        {
          // Pure modules, tested next to their source: no runtime bindings needed.
          test: { name: 'unit', environment: 'node', include: ['src/**/*.test.ts'] },
        },
        {
          test: {
            name: 'node',
            environment: 'node',
            include: ['test/node/*.test.ts'],
            testTimeout: 120_000,
            hookTimeout: 120_000,
          },
        },
        {
          // The platform emulator on its own: each file starts one on a free loopback port.
          test: {
            name: 'emulator',
            environment: 'node',
            include: ['emulator/test/*.test.ts'],
            testTimeout: 10_000,
            hookTimeout: 10_000,
          },
        },
      ],
    },
  };
});
