/**
 * The part of a tenant's TenantGuard that decides what its partner grants
 * (docs/OAUTH.md): OAuth grants to apps, from the partner's consent through code
 * exchange, each refresh and the end, and the partner's own keys, within what the
 * operator lets the tenant grant (its setting `partner_access`). A grant is a token of
 * the tenant (the tokens part decides it, through a TokenDecider, in this part's own
 * step): its limits, usage, request log and revocation are a token's. Each call
 * decides in one synchronous step, so a code or a refresh token is accepted once,
 * whatever arrives at the same time, and a spent one presented again ends its grant.
 * Its tables: `oauth_grants`, `oauth_spent_refresh` (grant-book.ts).
 */
import type { TokenLimits } from '../../../metering/policy';
import { DEFAULT_PARTNER_ACCESS, partnerAccessSchema } from '../../../tenants/partner-access';
import { redirectHostOf, webOriginOf } from '../../../tenants/redirect-uri';
import {
  expandScopes,
  grantable,
  grantScopes,
  hasScope,
  PARTNER_SCOPE,
} from '../../../tenants/scopes';
import type { TokenEntry } from '../../../tenants/token-store';
import type { TokenRecord } from '../../../types/tenants';
import type { PartnerAccess, PartnerApp } from '../../../types/wire';
import type { Chores } from '../part';
import type { SettingsView } from '../settings';
import type { Sql } from '../sql';
import type { AuditContext, MintedToken } from '../tokens/token-registry';
import type { TokenDecider } from '../tokens/tokens-part';
import { GrantBook, type GrantRow } from './grant-book';

/** What callers reach: the OAuth endpoints, the partner portal's routes, the operator API. */
export const GRANTS_CALLS = [
  'access',
  'setAccess',
  'consent',
  'exchange',
  'refresh',
  'revokeByRefresh',
  'revokeGrant',
  'apps',
  'createKey',
  'revokeKey',
] as const;

/** What the grants part needs beside its tables. */
export interface GrantsDeps {
  settings: SettingsView<'partner_access'>;
  /** The tenant's tokens, decided in this part's step (the tokens part). */
  tokens: TokenDecider;
  /** The start of the last hour a token was used in (the history part). */
  lastUsedHour(tokenId: string): number | null;
}

/** An app a partner approves, as the consent page shows it. */
export interface ConsentRequest {
  tenantId: string;
  /** The grant's token id (minted by the caller; the token exists once the code is used). */
  tokenId: string;
  client: { id: string; name: string; kind: 'dynamic' | 'operator' };
  redirectUri: string;
  /** The scopes the app asked for (presets by name). */
  asked: string[];
  /** The scopes the partner left checked (null: all it was shown). */
  chosen: string[] | null;
  /** The resource the app asked for (RFC 8707), or '' for none: every one of the gateway's. */
  resource: string;
  codeHash: string;
  codeChallenge: string;
  /** Who approves: `token:<id>` of the portal's token. */
  grantedBy: string;
  /** The operation groups there are now (declared operations add some). */
  groups: string[];
  now: number;
  codeTtlMs: number;
}

export type ConsentOutcome =
  | { kind: 'approved'; scopes: string[] }
  | { kind: 'dynamic_refused' }
  | { kind: 'invalid_scope'; allowed: string[] };

/** Lives of what a token request makes. */
export interface TokenLives {
  accessTtlMs: number;
  refreshTtlMs: number;
}

export interface ExchangeRequest extends TokenLives {
  tenantId: string;
  codeHash: string;
  clientId: string;
  redirectUri: string;
  /** BASE64URL(SHA-256(code_verifier)), made by the caller. */
  challenge: string;
  /** The `resource` of the token request, if it named one. */
  resource: string | null;
  minted: MintedToken;
  refreshHash: string;
  now: number;
  ctx: AuditContext;
}

export interface RefreshRequest extends TokenLives {
  tenantId: string;
  refreshHash: string;
  clientId: string;
  resource: string | null;
  /** A narrower scope asked for this access token (RFC 6749 6), or null. */
  scopes: string[] | null;
  minted: MintedToken;
  newRefreshHash: string;
  now: number;
  ctx: AuditContext;
}

/** Why a token request was refused, in RFC 6749's words (never a secret). */
export type TokenRefusal =
  | { kind: 'invalid_grant'; why: string }
  | { kind: 'invalid_target'; why: string }
  | { kind: 'invalid_scope'; why: string };

export type Issued = { kind: 'issued'; entry: TokenEntry; refreshUntil: number } | TokenRefusal;

export interface NewKey {
  tenantId: string;
  minted: MintedToken;
  name: string;
  scopes: string[];
  expiresAt: string | null;
  limits: TokenLimits | null;
  madeBy: string;
  groups: string[];
  now: number;
  ctx: AuditContext;
}

export type KeyOutcome =
  | { kind: 'created'; entry: TokenEntry }
  | { kind: 'too_many'; max: number }
  | { kind: 'invalid_scope'; allowed: string[]; unknown: string[] };

export class GrantsPart implements Chores {
  private readonly book: GrantBook;

  constructor(
    sql: Sql,
    private readonly deps: GrantsDeps,
  ) {
    this.book = new GrantBook(sql);
  }

  /** What the operator lets this tenant's partner grant (defaults where it set nothing). */
  access(): PartnerAccess {
    const kept = this.deps.settings.get('partner_access');
    if (kept === null) return DEFAULT_PARTNER_ACCESS;
    return { ...DEFAULT_PARTNER_ACCESS, ...partnerAccessSchema.partial().parse(JSON.parse(kept)) };
  }

  /** Changes what the partner may grant; grants made before keep their scopes. */
  setAccess(change: Partial<PartnerAccess>): PartnerAccess {
    const next = partnerAccessSchema.parse({ ...this.access(), ...change });
    this.deps.settings.put('partner_access', JSON.stringify(next));
    return next;
  }

  /**
   * The partner approves an app: the grant (its scopes within the tenant's grantable
   * ones, narrowed as the partner chose) and its code. Its token comes with the code.
   */
  consent(req: ConsentRequest): ConsentOutcome {
    const access = this.access();
    if (req.client.kind === 'dynamic' && !access.dynamic_clients)
      return { kind: 'dynamic_refused' };
    const allowed = grantable(req.asked, access.grantable_scopes, req.groups).scopes;
    const scopes = req.chosen ?? allowed;
    if (scopes.length === 0 || scopes.some((s) => !allowed.includes(s))) {
      return { kind: 'invalid_scope', allowed };
    }
    this.book.insert({
      tokenId: req.tokenId,
      clientId: req.client.id,
      clientName: req.client.name,
      redirectUri: req.redirectUri,
      scopes: [...new Set(scopes)].sort(),
      resource: req.resource,
      grantedBy: req.grantedBy,
      createdAt: req.now,
      codeHash: req.codeHash,
      codeChallenge: req.codeChallenge,
      codeExpiresAt: req.now + req.codeTtlMs,
    });
    return { kind: 'approved', scopes };
  }

  /**
   * A code for the grant's first token and refresh token. Every check passes or nothing
   * changes; a code used before, presented again, ends its grant (RFC 6749 4.1.2).
   */
  async exchange(req: ExchangeRequest): Promise<Issued> {
    const { tokens } = this.deps;
    await tokens.ready(req.tenantId);
    const grant = this.book.byCode(req.codeHash);
    if (!grant) return invalidGrant('unknown authorization code');
    if (grant.codeUsedAt !== null) {
      this.end(req.tenantId, grant, req.now, 'code_reused', req.ctx);
      await tokens.settle();
      return invalidGrant('this authorization code was used before: its grant is revoked');
    }
    const refused = codeRefusal(grant, req);
    if (refused) return refused;
    const refreshUntil = req.now + req.refreshTtlMs;
    this.book.codeUsed(grant.tokenId, req.now, req.refreshHash, refreshUntil);
    const limits = this.access().grant_limits;
    const entry = tokens.issue(
      req.tenantId,
      { ...req.minted, id: grant.tokenId },
      {
        name: `OAuth: ${grant.clientName}`.slice(0, 64),
        scopes: grant.scopes,
        expires_at: new Date(req.now + req.accessTtlMs).toISOString(),
      },
      limits,
      req.now,
      { ...boundTo(grant, req.resource), grant: tokenGrant(grant, refreshUntil) },
    );
    tokens.audit({
      ...req.ctx,
      actor: grant.grantedBy,
      action: 'oauth.granted',
      tenant_id: req.tenantId,
      token_id: grant.tokenId,
      detail: {
        client_id: grant.clientId,
        client_name: grant.clientName,
        redirect_host: redirectHostOf(grant.redirectUri),
        scopes: grant.scopes,
        resource: grant.resource,
        granted_by: grant.grantedBy,
        limits,
      },
    });
    await tokens.settle();
    return { kind: 'issued', entry, refreshUntil };
  }

  /**
   * A refresh: the presented refresh token is spent and a new one made, with a new secret
   * for the grant's token. A spent one presented again ends the grant (whoever sent it,
   * the app or a thief, one of them holds a copy that should not exist).
   */
  async refresh(req: RefreshRequest): Promise<Issued> {
    const { tokens } = this.deps;
    await tokens.ready(req.tenantId);
    const grant = this.book.byRefresh(req.refreshHash);
    if (!grant) {
      const spent = this.book.spentBy(req.refreshHash);
      if (!spent) return invalidGrant('unknown refresh token');
      this.end(req.tenantId, spent, req.now, 'refresh_reused', req.ctx);
      await tokens.settle();
      return invalidGrant('this refresh token was used before: its grant is revoked');
    }
    if (grant.clientId !== req.clientId) return invalidGrant('refresh token of another client');
    if (grant.endedAt !== null || tokens.get(grant.tokenId)?.revoked_at) {
      return invalidGrant('this grant was revoked');
    }
    if (grant.refreshExpiresAt === null || req.now >= grant.refreshExpiresAt) {
      this.book.end(grant.tokenId, req.now, 'expired');
      return invalidGrant('this refresh token has expired');
    }
    const target = targetRefusal(grant, req.resource);
    if (target) return target;
    const scopes = req.scopes ?? grant.scopes;
    if (scopes.length === 0 || scopes.some((s) => !grant.scopes.includes(s))) {
      return { kind: 'invalid_scope', why: 'a refresh may only narrow the grant' };
    }
    const refreshUntil = req.now + req.refreshTtlMs;
    const entry = tokens.renew(grant.tokenId, req.minted, {
      expires_at: new Date(req.now + req.accessTtlMs).toISOString(),
      scopes,
      resource: boundTo(grant, req.resource).resource,
      grant: tokenGrant(grant, refreshUntil),
    });
    if (!entry) return invalidGrant('this grant was revoked');
    this.book.refreshed(grant, req.now, req.newRefreshHash, refreshUntil);
    await tokens.settle();
    return { kind: 'issued', entry, refreshUntil };
  }

  /**
   * RFC 7009 with a refresh token (current or spent): its grant ends. `other_client` when
   * the token is another client's (nothing changes).
   */
  async revokeByRefresh(
    tenantId: string,
    hash: string,
    clientId: string,
    now: number,
    ctx: AuditContext,
  ): Promise<'revoked' | 'unknown' | 'other_client'> {
    await this.deps.tokens.ready(tenantId);
    const grant = this.book.byRefresh(hash) ?? this.book.spentBy(hash);
    if (!grant) return 'unknown';
    if (grant.clientId !== clientId) return 'other_client';
    this.end(tenantId, grant, now, 'revoked', ctx);
    await this.deps.tokens.settle();
    return 'revoked';
  }

  /**
   * Ends a grant by its token id (the partner in the portal; RFC 7009 with an access token,
   * `clientId` then being the caller's): false when there is no such grant of that client.
   */
  async revokeGrant(
    tenantId: string,
    tokenId: string,
    clientId: string | null,
    now: number,
    ctx: AuditContext,
  ): Promise<boolean> {
    await this.deps.tokens.ready(tenantId);
    const grant = this.book.byToken(tokenId);
    if (!grant || grant.codeUsedAt === null) return false;
    if (clientId !== null && grant.clientId !== clientId) return false;
    this.end(tenantId, grant, now, 'revoked', ctx);
    await this.deps.tokens.settle();
    return true;
  }

  /** The apps the tenant's partner approved and that got their token, newest first. */
  apps(): PartnerApp[] {
    const { tokens, lastUsedHour } = this.deps;
    return this.book.issued().map((g) => {
      const record = tokens.get(g.tokenId);
      const hour = lastUsedHour(g.tokenId);
      const revokedAt =
        record?.revoked_at ?? (g.endedAt ? new Date(g.endedAt).toISOString() : null);
      return {
        id: g.tokenId,
        client_id: g.clientId,
        client_name: g.clientName,
        redirect_host: redirectHostOf(g.redirectUri),
        scopes: record?.scopes ?? g.scopes,
        resource: g.resource,
        granted_by: g.grantedBy,
        created_at: new Date(g.createdAt).toISOString(),
        refresh_until: new Date(g.refreshExpiresAt ?? g.createdAt).toISOString(),
        last_used_at: hour === null ? null : new Date(hour).toISOString(),
        revoked_at: revokedAt,
      };
    });
  }

  /**
   * A key the partner makes for its own app: within the tenant's grantable scopes, and
   * no more working partner keys at once than the operator allows.
   */
  async createKey(req: NewKey): Promise<KeyOutcome> {
    const { tokens } = this.deps;
    await tokens.ready(req.tenantId);
    const access = this.access();
    const names = grantScopes(req.scopes, req.groups);
    const within = expandScopes(names.scopes, req.groups).scopes.every(
      (s) => s !== PARTNER_SCOPE && hasScope(access.grantable_scopes, s),
    );
    if (names.unknown.length > 0 || names.scopes.length === 0 || !within) {
      return { kind: 'invalid_scope', allowed: access.grantable_scopes, unknown: names.unknown };
    }
    const working = tokens.working(req.now).filter((r) => r.made_by);
    if (working.length >= access.max_keys) return { kind: 'too_many', max: access.max_keys };
    const entry = tokens.issue(
      req.tenantId,
      req.minted,
      { name: req.name, scopes: names.scopes, expires_at: req.expiresAt },
      req.limits,
      req.now,
      { made_by: req.madeBy },
    );
    tokens.audit({
      ...req.ctx,
      action: 'partner_key.created',
      tenant_id: req.tenantId,
      token_id: entry.record.id,
      detail: {
        name: req.name,
        scopes: names.scopes,
        expires_at: req.expiresAt,
        limits: req.limits,
        made_by: req.madeBy,
      },
    });
    await tokens.settle();
    return { kind: 'created', entry };
  }

  /** The partner revokes one of its own keys: false when it is no key the partner made. */
  async revokeKey(tenantId: string, tokenId: string, now: number, ctx: AuditContext) {
    const { tokens } = this.deps;
    await tokens.ready(tenantId);
    const record = tokens.get(tokenId);
    if (!record?.made_by) return false;
    tokens.revoke(tokenId, now, ctx);
    await tokens.settle();
    return true;
  }

  sweep(now: number): void {
    this.book.sweep(now);
  }

  /** Ends a grant and revokes its token (if it got one), audited as why it ended. */
  private end(
    tenantId: string,
    grant: GrantRow,
    now: number,
    reason: 'revoked' | 'code_reused' | 'refresh_reused',
    ctx: AuditContext,
  ): void {
    this.book.end(grant.tokenId, now, reason);
    // The token's revocation is audited as any token's (`token.revoked`); a reuse says why.
    if (grant.codeUsedAt !== null) this.deps.tokens.revoke(grant.tokenId, now, ctx);
    if (reason !== 'revoked') {
      this.deps.tokens.audit({
        ...ctx,
        action: `oauth.${reason}`,
        tenant_id: tenantId,
        token_id: grant.tokenId,
        detail: { client_id: grant.clientId, client_name: grant.clientName },
      });
    }
  }
}

const invalidGrant = (why: string): TokenRefusal => ({ kind: 'invalid_grant', why });

/** Why a code may not be exchanged by this request, or null (RFC 6749 4.1.3, RFC 7636). */
function codeRefusal(grant: GrantRow, req: ExchangeRequest): TokenRefusal | null {
  if (grant.endedAt !== null) return invalidGrant('this grant was revoked');
  if (grant.codeExpiresAt === null || req.now >= grant.codeExpiresAt) {
    return invalidGrant('this authorization code has expired');
  }
  if (grant.clientId !== req.clientId) return invalidGrant('authorization code of another client');
  if (grant.redirectUri !== req.redirectUri) {
    return invalidGrant('redirect_uri is not the one the code was issued for');
  }
  if (grant.codeChallenge !== req.challenge) {
    return invalidGrant('code_verifier does not match the code_challenge');
  }
  return targetRefusal(grant, req.resource);
}

/**
 * A token request's `resource` against its grant's (RFC 8707 2.2): a grant made for one
 * resource serves only that one; a grant for none ('') serves either, one at a time.
 */
function targetRefusal(grant: GrantRow, asked: string | null): TokenRefusal | null {
  if (asked === null || grant.resource === '' || asked === grant.resource) return null;
  return { kind: 'invalid_target', why: `this grant is for ${grant.resource}` };
}

/** The resource a new access token is bound to: the one asked for, else its grant's (none: every one). */
function boundTo(grant: GrantRow, asked: string | null): { resource?: string } {
  const resource = asked ?? grant.resource;
  return resource ? { resource } : {};
}

function tokenGrant(grant: GrantRow, refreshUntil: number): NonNullable<TokenRecord['grant']> {
  return {
    client_id: grant.clientId,
    client_name: grant.clientName,
    origin: webOriginOf(grant.redirectUri),
    granted_by: grant.grantedBy,
    refresh_until: new Date(refreshUntil).toISOString(),
  };
}
