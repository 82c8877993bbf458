/**
 * Paging bounds, the one source for the gateway's schemas (operations/schemas.ts)
 * and the platform emulator (emulator/http.ts), so the two agree
 * (docs/BOUNDS.md, "Paging"). No imports: the emulator reads this file as it is.
 */

/**
 * page_num's largest value. The platform states no maximum, so the gateway refuses only
 * what it cannot carry exactly: 2^53 - 1, the largest integer a JSON number (and the
 * gateway's own arithmetic) holds exactly. A page past the end is the platform's answer
 * (an empty page), not an error.
 */
export const PAGE_NUM_MAX = Number.MAX_SAFE_INTEGER;

/** page_size's bounds (specification, section 8). */
export const PAGE_SIZE_MIN = 1;
export const PAGE_SIZE_MAX = 100;
