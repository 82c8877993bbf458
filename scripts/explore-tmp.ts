import { Miniflare, convertV4MiniflareOptions } from 'miniflare';
import { keepAliveAgent, runRound, median } from './bench/load';
const script = 'export default { fetch() { return new Response(\'{"code":0}\'); } }';
const hello = new Miniflare(convertV4MiniflareOptions({ host: '127.0.0.1', port: 0, logRequests: false, workers: [{ name: 'h', modules: true, compatibilityDate: '2026-10-01', script, unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }] }] }));
const helloUrl = (await hello.ready).origin;
const direct = (await hello.unsafeGetDirectURL('h')).origin;
console.log(helloUrl, direct);
const targets = { entry: { url: new URL('/', helloUrl), headers: {} }, direct: { url: new URL('/', direct), headers: {} } };
const res: Record<string, number[]> = {};
for (let r = 0; r < 5; r++) for (const [name, t] of Object.entries(targets)) {
  const x = await runRound({ ...t, agent: keepAliveAgent(16), expect: { status: 200, code: 0 } }, { requests: 2000, concurrency: 16, capMs: 30000, requestTimeoutMs: 10000 });
  if (r > 0) (res[name] ??= []).push(x.ok / x.wallMs * 1000);
}
for (const [k, v] of Object.entries(res)) console.log(k, Math.round(median(v)), v.map(Math.round).join(' '));
await hello.dispose();
