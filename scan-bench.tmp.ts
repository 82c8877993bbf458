import { readFileSync } from 'node:fs';
import { hasSecretFieldInText, mayHoldSecrets } from './src/upstream/redact';
const text = readFileSync('/tmp/teamlists.json', 'utf8');
const shapes = { pattern: /sk-[A-Za-z0-9_-]{16,}/g, tenantKey: 'sk-emu-e58acab432e85f539f8436c41e357b0d0b2ada7c' };
function time(name: string, f: () => unknown) {
  for (let i = 0; i < 2000; i++) f();
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    for (let i = 0; i < 2000; i++) f();
    runs.push(((performance.now() - t) * 1000) / 2000);
  }
  runs.sort((a, b) => a - b);
  console.log(name.padEnd(30), runs[3]!.toFixed(1), 'µs');
}
time('JSON.parse', () => JSON.parse(text));
time('mayHoldSecrets', () => mayHoldSecrets(text, shapes));
time('hasSecretFieldInText', () => hasSecretFieldInText(text));
time('includes key', () => text.includes(shapes.tenantKey));
time('pattern', () => { shapes.pattern.lastIndex = 0; return shapes.pattern.test(text); });
time('includes backslash', () => text.includes('\\'));
const enc = new TextEncoder().encode(text);
const dec = new TextDecoder();
time('decode', () => dec.decode(enc));
