import { describe, expect, it } from 'vitest';
import { utf8 } from '../bytes';
import { hasSecretFieldInText, isSecretField, maskSecrets, mayHoldSecrets } from './redact';

const shapes = { pattern: /sk-[A-Za-z0-9_-]{16,}/g, tenantKey: 'tenant-own-key-0123456789' };
const masked = (value: unknown) =>
  JSON.parse(new TextDecoder().decode(maskSecrets(utf8(JSON.stringify(value)), shapes)));

/** Numbers in [0, 1) from a seed (a linear congruential generator): the same texts every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('masking platform secrets', () => {
  it('masks strings under fields that name a key or a secret, in any case or style', () => {
    const body = {
      data: [
        {
          id: 1,
          api_key: 'abcdefghijklmnop',
          apiKey: 'abcdefghijklmnop',
          Client_Secret: 'abcdefghijklmnop',
          'access-token': 'abcdefghijklmnop',
          password: 'hunter2',
          api_key_name: 'production',
          key_count: 3,
        },
      ],
    };
    expect(masked(body).data[0]).toEqual({
      id: 1,
      api_key: 'abc…mnop',
      apiKey: 'abc…mnop',
      Client_Secret: 'abc…mnop',
      'access-token': 'abc…mnop',
      password: '…',
      api_key_name: 'production',
      key_count: 3,
    });
  });

  it('masks what looks like a platform key, or is the tenant’s own, wherever it is', () => {
    const body = {
      note: 'use sk-emu-0123456789abcdef0123 to call',
      nested: [{ url: 'wss://x/?api_key=tenant-own-key-0123456789' }],
      model: { api_key: '' },
    };
    expect(masked(body)).toEqual({
      note: 'use sk-…0123 to call',
      nested: [{ url: 'wss://x/?api_key=ten…6789' }],
      model: { api_key: '' },
    });
  });

  it('leaves answers without secrets untouched, byte for byte', () => {
    const body = utf8('{"code":0,"msg":"Success","data":{"name":"a",  "api_key":""}}');
    expect(mayHoldSecrets(new TextDecoder().decode(body), shapes)).toBe(false);
    expect(maskSecrets(body, shapes)).toBe(body);
  });

  it('masks fields the quick look could miss: punctuation after the word, escapes in the name or key', () => {
    const text = JSON.stringify({
      key_: 'hunter2-secret',
      'token ': 'hunter2-secret',
      note: 'a\nsk-emu-0123456789abcdefABCD',
    }).replace('"note"', '"api_ke\\u0079":"hunter2-secret","note"');
    expect(text).toContain('api_ke\\u0079');
    const out = new TextDecoder().decode(maskSecrets(utf8(text), shapes));
    expect(out).not.toContain('hunter2');
    expect(out).not.toContain('0123456789abcdef');
    // A key written with escapes is a key all the same.
    const escaped = '{"a":"\\u0073k-emu-0123456789abcdefABCD"}';
    expect(new TextDecoder().decode(maskSecrets(utf8(escaped), shapes))).not.toContain(
      '0123456789',
    );
  });

  it("masks the tenant's own key however JSON writes it: with a quote or backslash escaped, or \\/", () => {
    const key = 'tenant"own\\key/0123456789';
    const own = { ...shapes, tenantKey: key };
    const plain = JSON.stringify({ note: `was ${key}` });
    const slashes = plain.replace('key/', 'key\\/');
    expect(slashes).toContain('key\\/0123');
    for (const text of [plain, slashes, `${plain.slice(0, -1)},"n":"line\\nbreak"}`]) {
      const out = new TextDecoder().decode(maskSecrets(utf8(text), own));
      expect(out, text).not.toContain('0123456789');
    }
  });

  it('names secret fields by their last word', () => {
    for (const name of ['api_key', 'apiKey', 'APIKEY', 'secret', 'refresh_token', 'Password'])
      expect(isSecretField(name), name).toBe(true);
    for (const name of ['api_key_name', 'keyboard', 'tokens_used', 'monkey', 'name'])
      expect(isSecretField(name), name).toBe(false);
  });
});

// The regex the lookbehind replaced, tried at every position (the specification): a secret
// word, then anything but a letter or digit up to the name's end.
const FIELD_SPEC =
  /(?:key|keys|secret|secrets|token|tokens|password|passwd|credentials?)[^A-Za-z0-9"\\]*"\s*:\s*"[^"]/i;

describe('the secret-field scan', () => {
  it('finds what the regex finds, on field names, spacing, case and Unicode spaces', () => {
    const cases = [
      '{"api_key":"x"}',
      '{"api_key" :\t "x"}',
      '{"API_KEY":"x"}',
      '{"apiKey":""}',
      '{"api_key":1}',
      '{"monkey":"banana"}',
      '{"key_name":"x"}',
      '{"Credentials":"x"}',
      '{"credential"\u00a0:\u2003"x"}',
      '{"note":"a token\\": \\"x"}',
      'key":"',
      'key":"x',
      ':"x"',
      '"key":',
      '{"a":"12:30","passwd":\n"p"}',
    ];
    for (const text of cases) expect(hasSecretFieldInText(text), text).toBe(FIELD_SPEC.test(text));
  });

  it('agrees with the regex on 20,000 random texts', () => {
    const parts = ['key', 'KEY', 'Token', 'secrets', 'passwd', 'credential', 'x', 'é', '1'];
    const joints = ['"', '":"', '" : "', '"\u00a0:\n"', ':', ' ', '\u2028', '""'];
    const random = seeded(42);
    let found = 0;
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 12);
      for (let i = 0; i < length; i++) {
        const from = i % 2 === 0 ? parts : joints;
        text += from[Math.floor(random() * from.length)];
      }
      const expected = FIELD_SPEC.test(text);
      if (expected) found++;
      expect(hasSecretFieldInText(text), JSON.stringify(text)).toBe(expected);
    }
    // The texts must exercise both answers.
    expect(found).toBeGreaterThan(100);
  });
});

describe('the escaped-name scan', () => {
  // The forward regex the lookbehind replaced (the specification): an escape, then the
  // rest of a string, ending a field name.
  const SPEC = /\\[\s\S](?:[^"\\]|\\[\s\S])*"\s*:/;

  it('agrees with the forward regex on 50,000 random texts of quotes, escapes and colons', () => {
    const alphabet = ['a', 'key', '"', '\\', ':', ' ', 'u', '0079', ',', '{', '}', 'n'];
    const random = seeded(7);
    let found = 0;
    for (let n = 0; n < 50_000; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 14);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      const escaped = text.includes('\\') && SPEC.test(text);
      if (escaped) found++;
      expect(hasSecretFieldInText(text), JSON.stringify(text)).toBe(
        FIELD_SPEC.test(text) || escaped,
      );
    }
    expect(found).toBeGreaterThan(300);
  });

  it('reads a long answer full of escapes once, not once per escape', () => {
    // 1 MB of chat with a line break every 50 characters: the forward regex took about
    // 30 s of CPU here, a Worker's whole budget; read back from names' ends it is one pass.
    const content = `${'x'.repeat(49)}\n`.repeat(20_000);
    const text = JSON.stringify({ code: 0, msg: 'Success', data: { content } });
    expect(hasSecretFieldInText(text)).toBe(false);
    const body = utf8(text);
    expect(maskSecrets(body, shapes)).toBe(body);
    const named = text.replace('"content"', '"api_ke\\u0079":"hunter2","content"');
    expect(hasSecretFieldInText(named)).toBe(true);
  });
});
