/**
 * The chaos script's gateways: each a fresh isolate on plain workerd (as
 * `npm run bench` runs it, without the assets router in front), in front of
 * the emulator, with limits that never refuse and one tenant per platform key
 * it is given. And the platform keys themselves: new keys of the emulator's
 * demo account, so each tenant has failure state of its own.
 */
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { adminClient } from '../../ui/lib/admin-client';
import { type GatewayBundle, type GatewayHost, startGateway } from '../workerd-host';
import type { Emulator } from './load';

const HUGE = 1_000_000_000;
/** Limits that never refuse: the scenarios measure the platform's failures, not the tenant's. */
const NEVER_REFUSED = JSON.stringify({
  policies: [{ name: 'burst', limit: HUGE, window_s: 10 }],
  quota: { daily: HUGE, monthly: HUGE },
});

export interface Gateway {
  host: GatewayHost;
  /** One tenant token per platform key, in the order of the keys. */
  tokens: string[];
  /** Their tenant ids, in the same order (the request log names tenants by id). */
  tenantIds: string[];
  /** The first tenant's token. */
  token: string;
  url: (path: string) => string;
  stats(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Every gateway started, so that main() can stop them all and read their warnings. */
export const hosts: GatewayHost[] = [];

export async function gateway(
  bundle: GatewayBundle,
  emu: Emulator,
  vars: Record<string, string> = {},
  keys: string[] = [DEMO_PLATFORM_KEY],
): Promise<Gateway> {
  const host = await startGateway({
    bundle,
    platformBaseUrl: emu.url,
    staticAssets: false,
    vars: { DEFAULT_LIMITS: NEVER_REFUSED, LOG_SAMPLE_RATE: '0', ...vars },
  });
  hosts.push(host);
  const admin = adminClient(host.url, { headers: { authorization: `Bearer ${host.adminToken}` } });
  const tokens: string[] = [];
  const tenantIds: string[] = [];
  for (const [i, key] of keys.entries()) {
    const res = await admin.tenants.$post({ json: { name: `chaos ${i}`, platform_key: key } });
    const body = await res.json();
    if (res.status !== 201) throw new Error(`creating tenant ${i} failed: HTTP ${res.status}`);
    tokens.push(body.data.token);
    tenantIds.push(body.data.tenant_id);
  }
  return {
    host,
    tokens,
    tenantIds,
    token: tokens[0] ?? '',
    url: (path) => `${host.url}${path}`,
    stats: async () => {
      const r = await admin.stats.$get();
      return (await r.json()).data.isolate;
    },
    stop: () => host.stop(),
  };
}

/** `n` new platform keys of the emulator's demo account. */
export async function platformKeys(emu: Emulator, n: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${emu.url}/user/apikey/new`, {
      method: 'POST',
      headers: { authorization: DEMO_PLATFORM_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `chaos-${i}-${crypto.randomUUID().slice(0, 8)}` }),
    });
    const body = (await res.json()) as { data: { api_key: string } };
    keys.push(body.data.api_key);
  }
  return keys;
}

/** A counter from GET /admin/stats (0 when absent). */
export function counter(stats: Record<string, unknown>, name: string): number {
  const v = stats[name];
  return typeof v === 'number' ? v : 0;
}
