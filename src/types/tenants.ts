/** Records kept in the TENANTS KV namespace (docs/STORAGE.md): their shapes only. */

export type TenantStatus = 'active' | 'disabled';

/** A tenant as stored: the platform key only sealed (tenants/crypto.ts). */
export interface StoredTenant {
  id: string;
  name: string;
  status: TenantStatus;
  /** Browser origins allowed to call with this tenant's tokens (CORS). */
  cors_origins: string[];
  /** `v1.<kid>.<iv>.<ciphertext>`: AES-GCM under KEY_ENCRYPTION_KEY. */
  platform_key_sealed: string;
  /** SHA-256 (hex) of the platform key: its identity for cache keys, never the key. */
  key_fingerprint: string;
  // No plan: the PlanBook alone says which plan a tenant is on (objects/plans/plan-book.ts).
  // Records written before this may still carry `plan`; it is ignored and dropped.
  created_at: string;
  updated_at: string;
}

/** A tenant with its platform key opened; exists only in memory. */
export interface Tenant extends Omit<StoredTenant, 'platform_key_sealed'> {
  platform_key: string;
}

/** Stored under the SHA-256 of the token; the token itself is never stored. */
export interface TokenRecord {
  id: string;
  tenant_id: string;
  name: string;
  /** First characters and last four, so operators can tell tokens apart. */
  prefix: string;
  last4: string;
  scopes: string[];
  created_at: string;
  /** ISO time after which the token is refused; null = no expiry. */
  expires_at: string | null;
  /**
   * The KEY_ENCRYPTION_KEY id whose key tagged the token (tenants/token.ts);
   * absent on legacy tokens, which work only until LEGACY_TOKENS_UNTIL.
   */
  tag_kid?: string;
  /** Set once the token is revoked (the record is kept a while to say so). */
  revoked_at?: string;
  /**
   * An OAuth access token's audience (RFC 8707): the one resource it is accepted at, the
   * gateway's API (its origin) or its `/mcp` (docs/OAUTH.md). Absent: every route.
   */
  resource?: string;
  /** Set on an OAuth grant's token: the app it was granted to, and by whom. */
  grant?: TokenGrant;
  /** Set on a partner's own key: who made it in the partner portal (`token:<id>`). */
  made_by?: string;
}

/**
 * An OAuth grant, as its token's record carries it (docs/OAUTH.md, "A grant is a token"):
 * the token's id is the grant's; each refresh gives it a new secret and expiry.
 */
export interface TokenGrant {
  client_id: string;
  client_name: string;
  /**
   * The origin of the redirect URI the grant was made for, its browser calls may come from
   * it; null for an app's own scheme (no browser origin).
   */
  origin: string | null;
  /** Who approved it in the partner portal (`token:<id>`). */
  granted_by: string;
  /** The refresh token's end: the grant ends then unless refreshed. */
  refresh_until: string;
}

/**
 * A tenant as the operator API shows it: no key, sealed or not. `key_fingerprint`
 * is a short one (the first 16 hex digits of the key's SHA-256), enough to tell
 * keys apart in the console; null in list rows written before it was kept.
 */
export type PublicTenant = Omit<StoredTenant, 'platform_key_sealed' | 'key_fingerprint'> & {
  key_fingerprint: string | null;
  /** The plan it is on, as the PlanBook says (null: none). */
  plan: string | null;
};

/** What the tenant list shows: its KV metadata (small), and the plan from the PlanBook. */
export type ListedTenant = Omit<PublicTenant, 'cors_origins'>;

/** A tenant's KV metadata: what one list call gives of each (no plan, which is not KV's). */
export type TenantMetadata = Omit<ListedTenant, 'plan'>;
