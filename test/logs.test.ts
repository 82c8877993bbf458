/** No log line the gateway writes carries a token or a platform key. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  gatewayWith,
  injectFault,
  platformKeys,
  requestId,
} from './helpers';

afterEach(() => vi.restoreAllMocks());

describe('logs', () => {
  it('never contain a secret, across operator actions, requests and failures', async () => {
    const lines: string[] = [];
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        lines.push(args.map(String).join(' '));
      });
    }
    const t = await createTenant(platformKeys.demo, 'logged');
    // Exact mode: every request calls the TenantGuard, so the unreachable one below is logged.
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], limiter: 'exact' }),
    });
    const issued = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'x' }),
      }),
    );
    await asTenant(t, '/team/lists');
    await asTenant(t, '/user/apikey/lists');
    await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ platform_key: platformKeys.other }),
    });
    const id = requestId();
    await injectFault({ request_id: id, kind: 'reset' });
    await asTenant(t, '/agent/lists', { headers: { 'x-request-id': id } });
    await gatewayWith({ TENANT_GUARD: undefined as never }, '/agent/lists', {
      headers: { authorization: t.token },
    });
    await admin(`/tenants/${t.id}/tokens/${issued.data.id}`, { method: 'DELETE' });

    expect(lines.length).toBeGreaterThan(4);
    const all = lines.join('\n');
    for (const secret of [t.token, issued.data.token, platformKeys.demo, platformKeys.other])
      expect(all).not.toContain(secret);
  });
});
