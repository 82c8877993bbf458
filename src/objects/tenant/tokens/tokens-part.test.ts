/**
 * The tokens part alone, on node:sqlite with injected time, KV's token records a map
 * (what KV would hold, keyed as the token store keys them): each change is decided in
 * one step and reaches KV, the audit log and the brokers before it answers; a
 * revocation decided before a rotation leaves nothing to rotate, one after it revokes
 * the old token only; a family rotates one step at a time; the tokens KV held before
 * are taken in once, by one read, whatever the calls waiting on it; and what KV
 * refused is written by the alarm.
 */
import { describe, expect, it } from 'vitest';
import { memorySql } from '../../../../scripts/sim/sqlite';
import { detachedIo } from '../../../../scripts/sim/tenant-io';
import type { BrokerPush } from '../../../metering/lease-protocol';
import type { TokenEntry } from '../../../tenants/token-store';
import type { NewAuditEntry } from '../../audit/audit-log';
import { GuardSettings } from '../settings';
import type { MintedToken } from './token-registry';
import { TokenStanding } from './token-standing';
import { TokensPart } from './tokens-part';

const T0 = Date.parse('2026-11-24T12:00:00Z');
const HOUR = 3_600_000;
const TENANT = 'ten_a';
const ctx = { request_id: 'req-1', actor: 'admin-token', ip: null, colo: null };
const spec = { name: 'ci', scopes: ['teams:read'], expires_at: null };

const minted = (id: string): MintedToken => ({
  id,
  hash: `hash-${id}`,
  prefix: 'apgw_abcd',
  last4: id.slice(-4),
  tag_kid: 'k1',
});

/** The part, with KV's records a map, and what it wrote, audited and pushed, in order. */
function part(stored: TokenEntry[] = []) {
  const kv = new Map<string, TokenEntry>();
  const writes: string[] = [];
  const audits: NewAuditEntry[] = [];
  const pushes: BrokerPush[] = [];
  let reads = 0;
  let refusing = 0;
  const sql = memorySql();
  const standing = new TokenStanding(sql);
  const tokens = new TokensPart(sql, {
    settings: new GuardSettings(sql),
    standing,
    io: detachedIo(() => T0, {
      audit: async (entry) => {
        audits.push(entry);
      },
      tokenRecords: {
        stored: async () => {
          reads += 1;
          return stored;
        },
        write: async (entry) => {
          if (refusing > 0) {
            refusing -= 1;
            throw new Error('KV refused');
          }
          writes.push(`${entry.record.id}${entry.record.revoked_at ? ' revoked' : ''}`);
          kv.set(entry.hash, entry);
        },
        erase: async (entry) => {
          writes.push(`${entry.record.id} erased`);
          kv.delete(entry.hash);
        },
      },
    }),
    tellBrokers: async (push) => {
      pushes.push(push);
    },
    lastUsedHour: (id) => (id === 'tok_a' ? T0 - HOUR : null),
  });
  return {
    tokens,
    standing,
    kv,
    writes,
    audits,
    pushes,
    reads: () => reads,
    refuse: (n: number) => {
      refusing = n;
    },
  };
}

describe('the tokens part', () => {
  it('issues a token with its own limits, in KV and counted against them before it answers', async () => {
    const p = part();
    const limits = { policies: [{ name: 'own', limit: 5, window_s: 60 }], quota: {} };
    const issued = await p.tokens.issue(TENANT, minted('tok_a'), spec, limits, T0);
    expect(issued.record).toMatchObject({
      id: 'tok_a',
      name: 'ci',
      created_at: new Date(T0).toISOString(),
    });
    expect(p.kv.get('hash-tok_a')?.record.id).toBe('tok_a');
    expect(p.tokens.limitsOf('tok_a')).toEqual(limits);
    expect(p.pushes).toEqual([{ kind: 'reset' }]);
    const [listed] = await p.tokens.list(TENANT, T0);
    expect(listed).toMatchObject({
      id: 'tok_a',
      family_id: 'tok_a',
      limits,
      last_used_at: new Date(T0 - HOUR).toISOString(),
    });
  });

  it('rotates one step at a time: the successor shares the line, the old one ends at the overlap', async () => {
    const p = part();
    await p.tokens.issue(TENANT, minted('tok_a'), spec, null, T0);
    const rotated = await p.tokens.rotate(TENANT, 'tok_a', minted('tok_b'), T0 + HOUR, T0, ctx);
    expect(rotated.kind).toBe('rotated');
    expect(p.standing.lineOf('tok_b')).toBe('tok_a');
    expect(p.standing.endOf('tok_a')).toEqual({ at: T0 + HOUR, reason: 'expired' });
    expect(p.pushes).toEqual([
      { kind: 'token', tokenId: 'tok_a', end: { at: T0 + HOUR, reason: 'expired' } },
    ]);
    expect(await p.tokens.rotate(TENANT, 'tok_a', minted('tok_c'), T0 + HOUR, T0, ctx)).toEqual({
      kind: 'successor_pending',
      successorId: 'tok_b',
    });
    expect(
      await p.tokens.rotate(TENANT, 'tok_b', minted('tok_c'), T0 + HOUR, T0, ctx),
    ).toMatchObject({
      kind: 'ancestor_working',
      ancestorId: 'tok_a',
    });
    expect(p.audits.map((a) => [a.action, a.token_id])).toEqual([['token.rotated', 'tok_a']]);
  });

  it('revokes before a rotation (nothing left to rotate) and after one (the old token only)', async () => {
    const p = part();
    await p.tokens.issue(TENANT, minted('tok_a'), spec, null, T0);
    await p.tokens.issue(TENANT, minted('tok_x'), spec, null, T0);
    await p.tokens.rotate(TENANT, 'tok_a', minted('tok_b'), T0 + HOUR, T0, ctx);
    const revoked = await p.tokens.revoke(TENANT, 'tok_a', false, T0 + 1, ctx);
    expect(revoked.revoked.map((e) => e.record.id)).toEqual(['tok_a']);
    expect(p.standing.endOf('tok_a')).toEqual({ at: T0 + 1, reason: 'revoked' });
    expect(p.standing.endOf('tok_b')).toBeNull();
    await p.tokens.revoke(TENANT, 'tok_x', false, T0 + 2, ctx);
    expect(await p.tokens.rotate(TENANT, 'tok_x', minted('tok_y'), T0 + HOUR, T0 + 3, ctx)).toEqual(
      {
        kind: 'revoked',
      },
    );
    // With its successors: the line goes, each once.
    const line = await p.tokens.revoke(TENANT, 'tok_a', true, T0 + 4, ctx);
    expect(line.revoked.map((e) => e.record.id)).toEqual(['tok_b']);
    expect(p.writes.filter((w) => w.endsWith('revoked'))).toEqual([
      'tok_a revoked',
      'tok_x revoked',
      'tok_b revoked',
    ]);
  });

  it('takes in the tokens KV held before it once, with one read, whatever the calls', async () => {
    const before: TokenEntry = {
      hash: 'hash-tok_old',
      record: {
        ...minted('tok_old'),
        tenant_id: TENANT,
        name: 'old',
        scopes: ['full'],
        created_at: new Date(T0 - HOUR).toISOString(),
        expires_at: null,
      },
    };
    const p = part([before]);
    const [a, b] = await Promise.all([p.tokens.list(TENANT, T0), p.tokens.list(TENANT, T0)]);
    expect(a.map((t) => t.id)).toEqual(['tok_old']);
    expect(b).toEqual(a);
    expect(p.reads()).toBe(1);
    await p.tokens.list(TENANT, T0);
    expect(p.reads()).toBe(1);
  });

  it('answers a change KV refused, and the alarm writes it', async () => {
    const p = part();
    await p.tokens.issue(TENANT, minted('tok_a'), spec, null, T0);
    p.refuse(2);
    const revoked = await p.tokens.revoke(TENANT, 'tok_a', false, T0, ctx);
    expect(revoked.kind).toBe('revoked');
    expect(p.kv.get('hash-tok_a')?.record.revoked_at).toBeUndefined();
    await p.tokens.catchUp();
    expect(p.kv.get('hash-tok_a')?.record.revoked_at).toBe(new Date(T0).toISOString());
    expect(p.audits.map((a) => a.action)).toEqual(['token.revoked']);
  });

  it('removes every record of a deleted tenant from KV', async () => {
    const p = part();
    await p.tokens.issue(TENANT, minted('tok_a'), spec, null, T0);
    await p.tokens.issue(TENANT, minted('tok_b'), spec, null, T0);
    const removed = await p.tokens.removeAll(TENANT);
    expect(removed.map((e) => e.record.id)).toEqual(['tok_a', 'tok_b']);
    expect(p.kv.size).toBe(0);
    expect(await p.tokens.list(TENANT, T0)).toEqual([]);
  });

  it('amends a working token in place, and restores a backed-up one once, with its limits', async () => {
    const p = part();
    const limits = { policies: [{ name: 'own', limit: 5, window_s: 60 }], quota: {} };
    await p.tokens.issue(TENANT, minted('tok_a'), spec, limits, T0);
    const amended = await p.tokens.amend(TENANT, 'tok_a', { name: 'deploy', expires_at: null });
    expect(amended?.record).toMatchObject({ id: 'tok_a', name: 'deploy', scopes: ['teams:read'] });
    expect(p.kv.get('hash-tok_a')?.record.name).toBe('deploy');
    await p.tokens.revoke(TENANT, 'tok_a', false, T0, ctx);
    expect(await p.tokens.amend(TENANT, 'tok_a', { name: 'again' })).toBeNull();

    const [head] = await part().tokens.heads(TENANT, T0);
    expect(head).toBeUndefined();
    const q = part();
    await q.tokens.issue(TENANT, minted('tok_b'), spec, limits, T0);
    const heads = await q.tokens.heads(TENANT, T0);
    const [b] = heads;
    if (!b) throw new Error('no head');
    expect(heads).toEqual([
      {
        hash: 'hash-tok_b',
        record: expect.objectContaining({ id: 'tok_b' }),
        familyId: 'tok_b',
        limits,
      },
    ]);
    // Into another guard: taken once, its limits with it; a token of another tenant is not.
    const r = part();
    const other = { ...b, record: { ...b.record, id: 'tok_o', tenant_id: 'ten_o' } };
    expect(await r.tokens.restore(TENANT, [...heads, other])).toEqual(['tok_b']);
    expect(await r.tokens.restore(TENANT, heads)).toEqual([]);
    expect(r.kv.get('hash-tok_b')?.record.id).toBe('tok_b');
    expect(r.tokens.limitsOf('tok_b')).toEqual(limits);
    expect(r.pushes).toEqual([{ kind: 'reset' }, { kind: 'reset' }]);
  });
});
