/**
 * Reads the gateway's RateLimit fields (draft-ietf-httpapi-ratelimit-headers,
 * src/limits/headers.ts) into one standing per policy:
 *   RateLimit-Policy: "burst";q=20;w=10, "daily";q=10000;w=86400
 *   RateLimit: "burst";r=7;t=4, "daily";r=9950;t=3600
 */
export interface Standing {
  name: string;
  /** Units a window allows (q) and its length in seconds (w). */
  limit: number;
  window_s: number;
  /** Units left now (r) and seconds until the window has drained (t). */
  remaining: number;
  reset_s: number;
}

type Params = Record<string, number>;

function items(field: string | null): Map<string, Params> {
  const out = new Map<string, Params>();
  for (const item of (field ?? '').split(',')) {
    const [rawName, ...rawParams] = item.trim().split(';');
    const name = /^"([a-z0-9_-]+)"$/.exec(rawName ?? '')?.[1];
    if (!name) continue;
    const params: Params = {};
    for (const p of rawParams) {
      const [key, value] = p.split('=');
      if (key && value && /^\d+$/.test(value)) params[key.trim()] = Number(value);
    }
    out.set(name, params);
  }
  return out;
}

export function standingsOf(headers: Headers): Standing[] {
  const policies = items(headers.get('ratelimit-policy'));
  const now = items(headers.get('ratelimit'));
  const standings: Standing[] = [];
  for (const [name, p] of policies) {
    const n = now.get(name);
    if (p.q === undefined || p.w === undefined || n?.r === undefined) continue;
    standings.push({ name, limit: p.q, window_s: p.w, remaining: n.r, reset_s: n.t ?? 0 });
  }
  return standings;
}
