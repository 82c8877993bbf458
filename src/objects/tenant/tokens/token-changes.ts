/**
 * The rules of a tenant's token changes, decided in its TenantGuard over the
 * registry (token-registry.ts) and what admission reads (token-standing.ts:
 * token states, own limits, shared meters), in one synchronous step each:
 *
 * - Issue: the token and its own limits exist together, or not at all.
 * - Rotation: the successor takes the old token's name, scopes, expiry, own
 *   limits and meters; the old token ends at the overlap's end. Refused for a
 *   revoked or expired token, for a token whose successor still works (409
 *   with that successor's id), and for a token whose ancestor still works: a
 *   family has at most two working tokens, the newest and the one it replaced.
 * - Revocation: the token, and with `withSuccessors` every token rotated from
 *   it. A revocation decided after a rotation revokes the old token only; one
 *   decided before it leaves nothing to rotate. Revoking twice changes nothing.
 *
 * Rotations and revocations queue their audit entries here, so the audit log
 * has them in the order they were decided.
 */

import type { BrokerPush } from '../../../metering/lease-protocol';
import type { TokenLimits } from '../../../metering/policy';
import type { TokenEntry } from '../../../tenants/token-store';
import type { TokenRecord } from '../../../types/tenants';
import type { TokenListing } from '../../../types/wire';
import {
  type AuditContext,
  listed,
  type MintedToken,
  type RotateOutcome,
  type TokenRegistry,
  type TokenRow,
  works,
} from './token-registry';
import type { TokenStanding } from './token-standing';

/** The name, scopes and expiry of a token to issue (admin/token-spec.ts checks them). */
export interface TokenSpecOf {
  name: string;
  scopes: string[];
  expires_at: string | null;
}

/** What may change of a working token in place. */
export interface TokenAmendment {
  name?: string;
  scopes?: string[];
  expires_at?: string | null;
}

/** A token as a sealed backup keeps it: never its secret, only its hash and record. */
export interface RestoredToken {
  hash: string;
  record: TokenRecord;
  familyId: string;
  limits: TokenLimits | null;
}
/** What an OAuth grant's token or a partner's key carries besides (the grants part). */
export type TokenMarks = Pick<TokenRecord, 'resource' | 'grant' | 'made_by'>;

export interface RevokeOutcome {
  kind: 'revoked' | 'not_found';
  /** Tokens this call revoked (already revoked ones are not repeated). */
  revoked: TokenEntry[];
}

/** A change and what to push to the regional brokers for it. */
export interface Decided<T> {
  outcome: T;
  pushes: BrokerPush[];
}

export class TokenChanges {
  constructor(
    private readonly tokens: TokenRegistry,
    private readonly standing: TokenStanding,
  ) {}

  issue(
    tenantId: string,
    minted: MintedToken,
    spec: TokenSpecOf,
    limits: TokenLimits | null,
    now: number,
    marks: TokenMarks = {},
  ): TokenEntry {
    const record: TokenRecord = {
      id: minted.id,
      tenant_id: tenantId,
      name: spec.name,
      prefix: minted.prefix,
      last4: minted.last4,
      scopes: spec.scopes,
      created_at: new Date(now).toISOString(),
      expires_at: spec.expires_at,
      tag_kid: minted.tag_kid,
      ...marks,
    };
    if (limits) this.standing.putLimits(minted.id, limits);
    this.tokens.insert({
      hash: minted.hash,
      record,
      familyId: minted.id,
      ancestorId: null,
      successorId: null,
      rotatedAt: null,
      rotatedBy: null,
    });
    return { hash: minted.hash, record };
  }

  /**
   * A new secret for an OAuth grant's token (a refresh): the same id, so its limits,
   * meters, usage and revocation stay the grant's; a new hash, expiry and scopes. The
   * secret it replaces keeps working until its own expiry (at most an access token's
   * life), unless the token is revoked. Null when the token is gone or revoked.
   */
  renew(
    tokenId: string,
    minted: MintedToken,
    change: Pick<TokenRecord, 'expires_at' | 'scopes' | 'grant' | 'resource'>,
  ): TokenEntry | null {
    const row = this.tokens.get(tokenId);
    if (!row || row.record.revoked_at || this.standing.endOf(tokenId)?.reason === 'revoked') {
      return null;
    }
    const record: TokenRecord = {
      ...row.record,
      prefix: minted.prefix,
      last4: minted.last4,
      tag_kid: minted.tag_kid,
      ...change,
    };
    // Each refresh may bind the token anew (RFC 8707); none named: every resource.
    if (change.resource === undefined) delete record.resource;
    this.tokens.rekey(tokenId, minted.hash, record);
    return { hash: minted.hash, record };
  }

  /** `until`: when the old token should stop (the overlap's end, as asked), in ms. */
  rotate(
    oldId: string,
    minted: MintedToken,
    until: number,
    now: number,
    ctx: AuditContext,
  ): Decided<RotateOutcome> {
    const old = this.tokens.get(oldId);
    const refused = old ? this.refusal(old, now) : ({ kind: 'not_found' } as const);
    if (refused || !old) return { outcome: refused ?? { kind: 'not_found' }, pushes: [] };

    const oldEnds = old.record.expires_at ? Date.parse(old.record.expires_at) : Infinity;
    const oldUntil = new Date(Math.min(until, oldEnds)).toISOString();
    const successor: TokenRow = {
      hash: minted.hash,
      record: {
        id: minted.id,
        tenant_id: old.record.tenant_id,
        name: old.record.name,
        prefix: minted.prefix,
        last4: minted.last4,
        scopes: old.record.scopes,
        created_at: new Date(now).toISOString(),
        expires_at: old.record.expires_at,
        tag_kid: minted.tag_kid,
        ...(old.record.made_by ? { made_by: old.record.made_by } : {}),
      },
      familyId: old.familyId,
      ancestorId: old.record.id,
      successorId: null,
      rotatedAt: null,
      rotatedBy: null,
    };
    const rotated: TokenRow = {
      ...old,
      record: { ...old.record, expires_at: oldUntil },
      successorId: minted.id,
      rotatedAt: now,
      rotatedBy: ctx.actor,
    };
    // The successor keeps the old token's own limits and counts against the same meters,
    // so the two together never exceed them during the overlap, and rotating never resets
    // a quota.
    this.standing.putLimits(minted.id, this.standing.limitsOf(oldId));
    this.standing.shareLine(minted.id, oldId);
    this.tokens.insert(successor);
    this.tokens.update(rotated);
    this.standing.expireAt(oldId, Date.parse(oldUntil));
    const self = ctx.actor === `token:${oldId}`;
    this.tokens.queueAudit({
      ...ctx,
      action: 'token.rotated',
      tenant_id: old.record.tenant_id,
      token_id: oldId,
      detail: {
        new_token_id: minted.id,
        old_valid_until: oldUntil,
        family_id: old.familyId,
        ...(self ? { by: 'self' } : {}),
      },
    });
    return {
      outcome: {
        kind: 'rotated',
        old: { hash: old.hash, record: rotated.record },
        successor: { hash: successor.hash, record: successor.record },
      },
      pushes: [this.standing.pushOf(oldId)],
    };
  }

  revoke(
    tokenId: string,
    withSuccessors: boolean,
    now: number,
    ctx: AuditContext,
  ): Decided<RevokeOutcome> {
    const token = this.tokens.get(tokenId);
    if (!token) return { outcome: { kind: 'not_found', revoked: [] }, pushes: [] };
    const targets = [token, ...(withSuccessors ? this.tokens.descendants(tokenId) : [])];
    const revoked: TokenEntry[] = [];
    const pushes: BrokerPush[] = [];
    const at = new Date(now).toISOString();
    for (const row of targets) {
      if (row.record.revoked_at) continue;
      const record = { ...row.record, revoked_at: at };
      this.tokens.update({ ...row, record });
      this.standing.revoke(row.record.id, now);
      revoked.push({ hash: row.hash, record });
      pushes.push(this.standing.pushOf(row.record.id));
      this.tokens.queueAudit({
        ...ctx,
        action: 'token.revoked',
        tenant_id: row.record.tenant_id,
        token_id: row.record.id,
        detail: row === token ? { with_successors: withSuccessors } : { with_ancestor: tokenId },
      });
    }
    return { outcome: { kind: 'revoked', revoked }, pushes };
  }

  /**
   * A working token's name, scopes or expiry, changed in place (the fleet file,
   * docs/CONFIG-AS-CODE.md): its secret, id and family stay. Null when there is no such
   * unrevoked token.
   */
  amend(tokenId: string, patch: TokenAmendment): TokenEntry | null {
    const row = this.tokens.get(tokenId);
    if (!row || row.record.revoked_at) return null;
    const record: TokenRecord = {
      ...row.record,
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.scopes !== undefined ? { scopes: patch.scopes } : {}),
      ...(patch.expires_at !== undefined ? { expires_at: patch.expires_at } : {}),
    };
    this.tokens.update({ ...row, record });
    return { hash: row.hash, record };
  }

  /**
   * A token taken back from a sealed backup as it was (its id, hash, family and own
   * limits): false when the guard holds a row of that token already (working, ended or
   * removed), which it keeps.
   */
  restore(restored: RestoredToken): boolean {
    const { hash, record, familyId, limits } = restored;
    if (this.tokens.exists(record.id)) return false;
    if (limits) this.standing.putLimits(record.id, limits);
    this.tokens.insert({
      hash,
      record,
      familyId,
      ancestorId: null,
      successorId: null,
      rotatedAt: null,
      rotatedBy: null,
    });
    return true;
  }

  /** The working tokens that head their family, with their hashes (for a sealed backup). */
  heads(now: number): RestoredToken[] {
    return this.tokens
      .list(now)
      .filter((row) => row.successorId === null && works(row.record, now))
      .map((row) => ({
        hash: row.hash,
        record: row.record,
        familyId: row.familyId,
        limits: this.standing.limitsOf(row.record.id),
      }));
  }

  /** A known, unrevoked token's own limits; false when there is no such token. */
  setLimits(tokenId: string, limits: TokenLimits | null): boolean {
    const token = this.tokens.get(tokenId);
    if (!token || token.record.revoked_at) return false;
    this.standing.putLimits(tokenId, limits);
    return true;
  }

  /** The tenant's tokens with their own limits, oldest first. */
  list(now: number): Omit<TokenListing, 'last_used_at'>[] {
    return this.tokens
      .list(now)
      .map((row) => ({ ...listed(row), limits: this.standing.limitsOf(row.record.id) }));
  }

  /** Why this token may not rotate now, or null when it may. */
  private refusal(old: TokenRow, now: number): RotateOutcome | null {
    if (old.record.revoked_at) return { kind: 'revoked' };
    // An OAuth grant's token gets its new secrets by refreshing, as its grant says.
    if (old.record.grant) return { kind: 'grant' };
    if (!works(old.record, now)) return { kind: 'expired' };
    const successor = old.successorId ? this.tokens.get(old.successorId) : null;
    if (successor && works(successor.record, now)) {
      return { kind: 'successor_pending', successorId: successor.record.id };
    }
    const ancestor = old.ancestorId ? this.tokens.get(old.ancestorId) : null;
    if (ancestor && works(ancestor.record, now)) {
      return {
        kind: 'ancestor_working',
        ancestorId: ancestor.record.id,
        until: ancestor.record.expires_at,
      };
    }
    return null;
  }
}
