/**
 * Sealed backups (docs/CONFIG-AS-CODE.md, "Backup and restore"): the fleet file, each
 * tenant's platform key and webhook signing secret, and each token's record (its
 * SHA-256 and display parts, never the token), sealed with a passphrase the operator
 * gives, never with KEY_ENCRYPTION_KEY: AES-256-GCM under a key PBKDF2-SHA-256 derives
 * from it (100,000 rounds, the most workerd runs, and a random salt), read back only
 * with the same passphrase.
 *
 * A token's secret carries a tag made with a key derived from KEY_ENCRYPTION_KEY
 * (tenants/token.ts), so it works only where that key is. The archive keeps a check
 * value of each tagging key (an HMAC of a fixed text, which reveals nothing of the key):
 * a restore compares it with the gateway's own and restores a token's record only where
 * they match; elsewhere the token is issued anew and named.
 */

import { invalidField } from '../../errors';
import { toHex } from '../../hash';
import type { RestoredToken } from '../../objects/tenant/tokens/token-changes';
import { fromBase64Url, type KeyRing, toBase64Url } from '../../tenants/crypto';
import type { FleetFile } from '../config-file';

export const ARCHIVE_PREFIX = 'apgw-backup.v1.';
const PBKDF2_ROUNDS = 100_000;
const AAD = new TextEncoder().encode('apgw fleet backup v1');
const TAG_CHECK_TEXT = new TextEncoder().encode('apgw token tag check v1');

export interface ArchivedTenant {
  id: string;
  platform_key: string;
  webhook_secret: string | null;
}

export interface ArchiveBody {
  format: 'apgw-fleet-backup';
  made_at: string;
  file: FleetFile;
  /** By tenant ref. */
  tenants: Record<string, ArchivedTenant>;
  /** By tenant ref, then token ref. */
  tokens: Record<string, Record<string, RestoredToken>>;
  /** The tagging keys' check values, by key id. */
  tag_checks: Record<string, string>;
}

async function keyFrom(passphrase: string, salt: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(passphrase),
    'PBKDF2',
    false,
    ['deriveKey'],
  );
  return crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations: PBKDF2_ROUNDS },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

export async function sealArchive(body: ArchiveBody, passphrase: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await keyFrom(passphrase, salt);
  const plain = new TextEncoder().encode(JSON.stringify(body));
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: AAD },
    key,
    plain,
  );
  return `${ARCHIVE_PREFIX}${toBase64Url(salt)}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
}

/** The archive's contents; a 400 on `archive` when the passphrase or the text is wrong. */
export async function openArchive(text: string, passphrase: string): Promise<ArchiveBody> {
  const refused = invalidField(
    'body',
    'archive',
    'archive: cannot be opened with this key (a wrong CONFIG_BACKUP_KEY, or a damaged file)',
  );
  const [salt, iv, sealed] = text.startsWith(ARCHIVE_PREFIX)
    ? text.slice(ARCHIVE_PREFIX.length).split('.')
    : [];
  if (!salt || !iv || !sealed) throw refused;
  try {
    const key = await keyFrom(passphrase, fromBase64Url(salt));
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64Url(iv), additionalData: AAD },
      key,
      fromBase64Url(sealed),
    );
    const body = JSON.parse(new TextDecoder().decode(plain)) as ArchiveBody;
    if (body.format !== 'apgw-fleet-backup') throw refused;
    return body;
  } catch {
    throw refused;
  }
}

/** Each tagging key's check value, by key id. */
export async function tagChecks(ring: KeyRing): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [kid, key] of ring.tagging) {
    const mac = await crypto.subtle.sign('HMAC', key, TAG_CHECK_TEXT);
    out[kid] = toHex(new Uint8Array(mac), 0, 16);
  }
  return out;
}
