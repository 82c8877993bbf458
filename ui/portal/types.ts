/** What the portal reads from the gateway: GET /token and GET /usage (src/token-route.ts, src/usage-route.ts). */
export interface Me {
  tenant: { id: string; name: string };
  token: {
    id: string;
    name: string;
    prefix: string;
    last4: string;
    scopes: string[];
    created_at: string | null;
    expires_at: string | null;
    browser: boolean;
  };
  limits: unknown;
  /** The tenant's meters and the token's own, as the TenantGuard counts them now. */
  meters: Meter[];
  can_rotate: boolean;
}

export interface Meter {
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  window_s: number;
  used: number;
  remaining: number;
  reset_s: number;
}

export interface Usage {
  tenant_id: string;
  meters: Meter[];
  days: {
    t: string;
    requests: number;
    units: number;
    p50_ms: number | null;
    p95_ms: number | null;
  }[];
  refusals?: { t: string; policy: string; count: number }[];
}

export interface Rotated {
  id: string;
  token: string;
  expires_at: string | null;
  old_token: { id: string; expires_at: string };
}
