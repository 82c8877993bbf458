/** Reads a Retry-After header (seconds or an HTTP date) as whole seconds from now. */

/** The longest pause the gateway honours, whatever the platform asks (docs/RESILIENCE.md). */
export const MAX_RETRY_AFTER_S = 300;

/** Seconds to wait (1..MAX_RETRY_AFTER_S), or null when the header is absent or unreadable. */
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
  return Math.min(MAX_RETRY_AFTER_S, Math.max(1, seconds));
}
