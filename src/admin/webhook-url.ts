/**
 * Which quota alert webhooks the gateway will POST to (docs/SECURITY.md,
 * "Webhooks"): https only, no credentials in the URL, and no loopback,
 * private, link-local or otherwise non-public IP literal, so an operator
 * mistake or a stolen operator token cannot aim the gateway's signed requests
 * at internal services. Local development (WEBHOOK_LOCAL_TARGETS=allow) may
 * use http and loopback, for the bundled emulator's receiver.
 */

/** Why a webhook URL is refused, or null when it is fine. */
export function webhookUrlProblem(text: string, allowLocal: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowLocal && url.protocol === 'http:')) {
    return 'url must be https';
  }
  if (url.username || url.password) return 'url must not carry credentials';
  if (!allowLocal && isNonPublicHost(url.hostname)) {
    return 'url must not name a loopback, private or link-local address';
  }
  return null;
}

/** `hostname` as the URL parser gives it: IPv4 dotted, `[v6]`, or a name. */
function isNonPublicHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.startsWith('[')) return isNonPublicV6(host.slice(1, -1));
  const v4 = ipv4(host);
  return v4 !== null && isNonPublicV4(v4);
}

/** The URL parser has already turned `0x7f.1`, `2130706433` and the like into dotted form. */
function ipv4(host: string): number[] | null {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null;
  return parts.map(Number);
}

function isNonPublicV4([a = 0, b = 0]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224 // multicast and reserved
  );
}

function isNonPublicV6(address: string): boolean {
  const groups = expandV6(address);
  if (!groups) return true;
  const [first = 0] = groups;
  if (groups.every((g) => g === 0)) return true; // ::
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return true; // ::1
  if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7, unique local
  if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10, link-local
  if ((first & 0xff00) === 0xff00) return true; // multicast
  // ::ffff:a.b.c.d, IPv4-mapped: judged as the IPv4 address it maps.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return isNonPublicV4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  }
  return false;
}

/** Eight 16-bit groups, or null; the URL parser has already written any dotted tail in hex. */
function expandV6(address: string): number[] | null {
  const [head = '', tail, extra] = address.split('::');
  if (extra !== undefined) return null;
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16));
}
