/** Values the Node-side global setup hands to tests running in workerd. */
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    platformKeys: { demo: string; demoSecond: string; other: string };
    demoDashboard: { productId: string; reportId: string; queryId: string };
    /** test/fuzz.test.ts: cases to run (0: the default) and the seed (null: fixed, or random with runs). */
    /** The local Cloudflare Access stand-in (scripts/local-access.ts): its origin, AUD and ACCESS_ROLES. */
    localAccess: { url: string; aud: string; roles: string };
    fuzz: { runs: number; seed: number | null };
  }
}
