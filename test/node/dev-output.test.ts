/**
 * What `npm start` prints of the gateway's output (scripts/dev-output.ts), line by line,
 * from lines wrangler dev and the Worker really print.
 */
import { describe, expect, it } from 'vitest';
import { devLine } from '../../scripts/dev-output';

const WRANGLER = '[wrangler:info] GET /team/lists 200 OK (86ms)';
const WORKER =
  '{"level":"info","event":"request","request_id":"3bb72a9a-b729-4d70-9b4f-65207b1af580","tenant_id":"ten_fSrotNx0tNDpXTN7","route":"team.list","method":"GET","status":200,"duration_ms":64}';
const UNHANDLED = '{"level":"error","event":"unhandled","request_id":"r1","error":"TypeError: x"}';
const at = new Date('2026-11-29T10:11:12Z');

describe('npm start output', () => {
  it('prints no line per request by default, and passes everything else', () => {
    expect(devLine(WRANGLER, 'quiet', at)).toBeNull();
    expect(devLine(WORKER, 'quiet', at)).toBeNull();
    expect(devLine(UNHANDLED, 'quiet', at)).toBe(UNHANDLED);
    expect(devLine('✘ [ERROR] Build failed', 'quiet', at)).toBe('✘ [ERROR] Build failed');
  });

  it('with --requests, one short line per request (the Worker line is the same request)', () => {
    expect(devLine(WRANGLER, 'requests', at)).toBe('10:11:12 GET /team/lists 200 86 ms');
    expect(devLine(`\u001b[2m${WRANGLER}\u001b[22m`, 'requests', at)).toBe(
      '10:11:12 GET /team/lists 200 86 ms',
    );
    expect(devLine('[wrangler:info] GET /nope 404 Not Found (13ms)', 'requests', at)).toBe(
      '10:11:12 GET /nope 404 13 ms',
    );
    expect(devLine(WORKER, 'requests', at)).toBeNull();
  });

  it('with --verbose, everything as it comes', () => {
    for (const line of [WRANGLER, WORKER, UNHANDLED])
      expect(devLine(line, 'verbose', at)).toBe(line);
  });
});
