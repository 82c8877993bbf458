/** Values the Node-side global setup hands to tests running in workerd. */
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    platformKeys: { demo: string; demoSecond: string; other: string };
  }
}
