/**
 * The operator API, as the Node tests call it: with the local gateway's admin token, the
 * answer's `data`, or an error naming the call and the refusal.
 */
export async function operatorCall<T = any>(
  gateway: { url: string; adminToken: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${gateway.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { code: number; data: T };
  if (!res.ok || json.code !== 0) {
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  }
  return json.data;
}
