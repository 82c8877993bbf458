/**
 * Reads a Retry-After header (seconds or an HTTP date) as whole seconds from
 * now. The caller gets the header as the platform sent it; how long the
 * gateway itself holds calls is capped apart (MAX_PLATFORM_PAUSE_S,
 * upstream-health.ts).
 */

/** Seconds to wait (at least 1), or null when the header is absent or unreadable. */
export function retryAfterSeconds(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  let seconds: number;
  if (/^\d+$/.test(text)) seconds = Number(text);
  else {
    // An HTTP date names its day and month; anything else (`-3`) is not one.
    if (!/[A-Za-z]/.test(text)) return null;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    seconds = Math.ceil((at - now) / 1000);
  }
  return Math.max(1, seconds);
}
