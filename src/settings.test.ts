/** Settings made by one helper each (origins, lists, numbers): what they keep, and what they refuse. */
import { describe, expect, it } from 'vitest';
import { settingsSchema } from './settings';

const {
  PORTAL_ORIGIN,
  ACCESS_TEAM_DOMAIN,
  ACCESS_AUD,
  IDEMPOTENCY_REQUIRED,
  LOG_SAMPLE_RATE,
  BROWSER_PARTITION_SHARE,
} = settingsSchema.shape;

const refusal = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.success ? null : result.error?.issues[0]?.message;

describe('origin settings', () => {
  it('PORTAL_ORIGIN: an https origin, or http on loopback; unset when blank', () => {
    expect(PORTAL_ORIGIN.parse(' https://gw.example.com ')).toBe('https://gw.example.com');
    expect(PORTAL_ORIGIN.parse('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787');
    expect(PORTAL_ORIGIN.parse('  ')).toBeUndefined();
    expect(PORTAL_ORIGIN.parse(undefined)).toBeUndefined();
    for (const bad of [
      'http://gw.example.com',
      'https://gw.example.com/portal',
      'gw.example.com',
    ]) {
      expect(refusal(PORTAL_ORIGIN.safeParse(bad))).toBe(
        'must be an origin such as https://gw.example.com (http only for loopback)',
      );
    }
  });

  it('ACCESS_TEAM_DOMAIN: a team domain or its origin, as an https origin; unset when blank', () => {
    expect(ACCESS_TEAM_DOMAIN.parse('myteam.cloudflareaccess.com')).toBe(
      'https://myteam.cloudflareaccess.com',
    );
    expect(ACCESS_TEAM_DOMAIN.parse('https://myteam.cloudflareaccess.com/')).toBe(
      'https://myteam.cloudflareaccess.com',
    );
    expect(ACCESS_TEAM_DOMAIN.parse('')).toBeUndefined();
    expect(refusal(ACCESS_TEAM_DOMAIN.safeParse('https://myteam.cloudflareaccess.com/x?y'))).toBe(
      'must be a team domain such as myteam.cloudflareaccess.com',
    );
  });
});

describe('list settings', () => {
  it('ACCESS_AUD and IDEMPOTENCY_REQUIRED: comma-separated, trimmed, blanks dropped; unset is empty', () => {
    expect(ACCESS_AUD.parse(' aud-1, ,aud-2,')).toEqual(['aud-1', 'aud-2']);
    expect(IDEMPOTENCY_REQUIRED.parse('session.create')).toEqual(['session.create']);
    expect(IDEMPOTENCY_REQUIRED.parse(undefined)).toEqual([]);
  });
});

describe('number settings', () => {
  it('LOG_SAMPLE_RATE: from 0 to 1, 1 when blank; BROWSER_PARTITION_SHARE: above 0, 0.5 when blank', () => {
    expect(LOG_SAMPLE_RATE.parse('0.25')).toBe(0.25);
    expect(LOG_SAMPLE_RATE.parse('')).toBe(1);
    expect(refusal(LOG_SAMPLE_RATE.safeParse('1.5'))).toBe('must be from 0 to 1');
    expect(refusal(LOG_SAMPLE_RATE.safeParse('often'))).toBe('must be a number');
    expect(BROWSER_PARTITION_SHARE.parse(undefined)).toBe(0.5);
    expect(refusal(BROWSER_PARTITION_SHARE.safeParse('0'))).toBe('must be above 0');
  });
});
