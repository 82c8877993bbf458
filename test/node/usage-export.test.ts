/**
 * The usage export end to end on `wrangler dev` (docs/BILLING.md): 1,000 billable
 * requests across three tenants, the local sink down for a while in the middle, reach
 * the sink once each (repeats only as repeated ids), and each tenant's events equal its
 * usage history's billable requests, as the export's reconciliation says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, OTHER_PLATFORM_KEY } from '../../emulator/seed';
import { createTenant, type Stack } from '../../scripts/stack';
import { adminClient, segments } from '../../ui/lib/admin-client';
import { freshStack } from './fresh-stack';

const STATE = '.wrangler/usage-export-test-state';
const LIMITS = JSON.stringify({
  policies: [{ name: 'burst', limit: 1_000_000, window_s: 10 }],
  quota: {},
});
let stack: Stack;

beforeAll(async () => {
  stack = await freshStack(STATE, { DEFAULT_LIMITS: LIMITS, USAGE_RETRY_BASE_S: '1' });
});
afterAll(async () => {
  await stack?.stop();
});

interface Sink {
  unique: number;
  repeats: number;
  deliveries: { status: number; verified: boolean | null }[];
  events: { id: string; subject: string; data: { request_id: string } }[];
}

const sink = async (subject?: string): Promise<Sink> =>
  (
    await fetch(`${stack.emulatorUrl}/__emulator/usage/main${subject ? `?subject=${subject}` : ''}`)
  ).json() as Promise<Sink>;

async function setDown(down: boolean) {
  const res = await fetch(`${stack.emulatorUrl}/__emulator/usage/main/down`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ down }),
  });
  expect(res.status).toBe(200);
}

/** Polls until `check` holds, or fails after `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the usage export on wrangler dev', () => {
  it('1,000 requests across 3 tenants reach a sink that was down for a while, once each', async () => {
    const tenants = await Promise.all([
      createTenant(stack, 'export a', DEMO_PLATFORM_KEY),
      createTenant(stack, 'export b', DEMO_PLATFORM_KEY),
      createTenant(stack, 'export c', OTHER_PLATFORM_KEY),
    ]);
    const paths = ['/team/lists', '/agent/lists', '/team/lists?page_size=3', '/browser/lists'];
    const ids = new Map<string, Set<string>>(tenants.map((t) => [t.tenant_id, new Set()]));
    let next = 0;
    /** Sends requests `from` to `to` (of the 1,000), 16 at a time, round-robin over tenants. */
    async function send(to: number) {
      const worker = async () => {
        while (next < to) {
          const i = next++;
          const t = tenants[i % 3]!;
          const res = await fetch(`${stack.gatewayUrl}${paths[i % paths.length]}`, {
            headers: { authorization: `Bearer ${t.token}` },
          });
          await res.arrayBuffer();
          expect(res.status).toBe(200);
          ids.get(t.tenant_id)?.add(res.headers.get('x-request-id') ?? '');
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
    }

    await send(400);
    await setDown(true);
    await send(700);
    // Down until the consumer has been refused at least twice (batches retried, not lost).
    await until(
      async () => (await sink()).deliveries.filter((d) => d.status === 503).length >= 2,
      'the consumer to meet the sink down',
      60_000,
    );
    await setDown(false);
    await send(1000);

    await until(async () => (await sink()).unique >= 1000, '1,000 events at the sink', 120_000);
    const all = await sink();
    expect(all.unique).toBe(1000);
    // Every batch the sink took was signed and checked.
    for (const d of all.deliveries.filter((x) => x.status === 200)) expect(d.verified).toBe(true);
    const admin = adminClient(stack.gatewayUrl, {
      headers: { authorization: `Bearer ${stack.adminToken}` },
    });
    for (const t of tenants) {
      const mine = await sink(t.tenant_id);
      const sent = ids.get(t.tenant_id) ?? new Set();
      // Exactly its requests: the event ids are the request ids the gateway answered with.
      expect(new Set(mine.events.map((e) => e.id))).toEqual(sent);
      expect(new Set(mine.events.map((e) => e.data.request_id))).toEqual(sent);
      // Reconciled: the history's billable requests, delivered, and the archive agree.
      let day: { billable: number; delivered: number; dead: number; backlog: number } | undefined;
      await until(
        async () => {
          const res = await admin.tenants[':id'].usage.export.$get({
            param: segments({ id: t.tenant_id }),
            query: { archive: 'true' },
          });
          const body = (await res.json()) as {
            data: { days: (typeof day & { archived: { delivered: number } })[] };
          };
          day = body.data.days[0];
          return day?.billable === sent.size && day.delivered === sent.size;
        },
        `${t.tenant_id}'s export to reconcile`,
        60_000,
      );
      expect(day).toMatchObject({ billable: sent.size, delivered: sent.size, dead: 0, backlog: 0 });
      expect(day).toMatchObject({ archived: { delivered: sent.size, dead: 0 } });
    }
  }, 300_000);
});
