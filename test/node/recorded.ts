/**
 * A refused request's row reaches its TenantGuard with the isolate's next guard call.
 * One refused in the gateway itself (its window known full: a refusal lease, docs/LIMITS.md)
 * made none, and the next is made once the lease has ended (LEASE_MAX_MS), or by the usage
 * timer: this sends requests, a poll at a time, until the operator's lookup finds the row.
 */
export async function untilRecorded(
  gateway: { url: string; adminToken: string },
  tenantId: string,
  requestId: string,
  send: () => Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  const lookup = `${gateway.url}/admin/tenants/${tenantId}/requests?request_id=${encodeURIComponent(requestId)}`;
  for (;;) {
    await send();
    const res = await fetch(lookup, { headers: { authorization: `Bearer ${gateway.adminToken}` } });
    const body = (await res.json()) as { data: { requests: unknown[] } };
    if (body.data.requests.length > 0) return;
    if (Date.now() > deadline) throw new Error(`request ${requestId} not recorded within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
