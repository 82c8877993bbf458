import { describe, expect, it } from 'vitest';
import { cacheKeyUrl } from './key';

const parts = {
  keyFingerprint: 'a'.repeat(64),
  version: '0',
  upstreamBase: 'http://platform',
  operationId: 'team.list',
  upstreamPath: '/team/lists',
  credential: 'authorization',
  params: {},
  query: { page_num: 1, page_size: 10 },
};

describe('cache keys', () => {
  it('are the same for the same normalized query in any order', async () => {
    expect(await cacheKeyUrl(parts)).toBe(
      await cacheKeyUrl({ ...parts, query: { page_size: 10, page_num: 1, team_type: undefined } }),
    );
  });

  it('differ by platform key, version, upstream, route, header, path and query', async () => {
    const base = await cacheKeyUrl(parts);
    const changes = [
      { keyFingerprint: 'b'.repeat(64) },
      { version: '1' },
      { upstreamBase: 'http://other' },
      { operationId: 'x' },
      { upstreamPath: '/v2/team/lists' },
      { credential: 'x-api-key' },
      { params: { team_id: '1' } },
      { query: { page_num: 2, page_size: 10 } },
    ];
    const keys = await Promise.all(changes.map((change) => cacheKeyUrl({ ...parts, ...change })));
    expect(new Set([base, ...keys]).size).toBe(changes.length + 1);
  });

  it('cannot be confused by values that contain separators', async () => {
    const a = await cacheKeyUrl({ ...parts, query: { a: '1","b":"2' } });
    const b = await cacheKeyUrl({ ...parts, query: { a: '1', b: '2' } });
    expect(a).not.toBe(b);
  });

  it('contain nothing but a hash', async () => {
    expect(await cacheKeyUrl(parts)).toMatch(
      /^https:\/\/gateway-cache\.invalid\/v1\/[0-9a-f]{64}$/,
    );
  });
});
