// The session event stream: WebSocket /session/ws/{session_id}?api_key=<key>.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_PLATFORM_KEY, OTHER_PLATFORM_KEY } from '../seed';
import { startEmulator } from '../server';
import type { RecordedRequest } from '../store';
import type { Message, NewSession, Session, SessionFrame } from '../types';
import { at, first, seeded, UNAUTHORIZED_TEXT, useEmulator, xKey } from './client';

const emu = useEmulator({ resetEach: true });
const session = first(seeded.demo.sessions);
const sid = session.session_id;

interface StreamResult {
  frames: SessionFrame[];
  /** When the socket opened, in ms after the attempt started. */
  openedAfter?: number;
  close?: { code: number; reason: string };
  refused?: { status: number; body: string };
  error?: Error;
}

interface StreamOptions {
  requestId?: string;
  /** Closes from the client side after this many frames. */
  closeAfter?: number;
  base?: string;
}

/** Opens a stream and collects it until it ends (bounded: terminated after 8 s). */
function openStream(path: string, o: StreamOptions = {}): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const out: StreamResult = { frames: [] };
    const url = `${(o.base ?? emu.url).replace(/^http/, 'ws')}${path}`;
    const ws = new WebSocket(
      url,
      o.requestId === undefined ? {} : { headers: { 'x-request-id': o.requestId } },
    );
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`stream ${path} did not end within 8 s`));
    }, 8000);
    const done = () => {
      clearTimeout(timer);
      resolve(out);
    };
    ws.on('open', () => {
      out.openedAfter = Date.now() - started;
    });
    ws.on('message', (data) => {
      out.frames.push(JSON.parse(String(data)) as SessionFrame);
      if (o.closeAfter !== undefined && out.frames.length >= o.closeAfter) ws.close(1000);
    });
    ws.on('unexpected-response', (req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        out.refused = { status: res.statusCode ?? 0, body };
        req.destroy();
        done();
      });
    });
    ws.on('close', (code, reason) => {
      out.close = { code, reason: reason.toString() };
      done();
    });
    ws.on('error', (err) => {
      out.error = err;
      done();
    });
  });
}

const streamPath = (id: string, key: string) =>
  `/session/ws/${encodeURIComponent(id)}?api_key=${encodeURIComponent(key)}`;
const messagesOf = (frames: SessionFrame[]): Message[] =>
  frames.flatMap((f) => (f.type === 'message' ? [f.message] : []));
const info = (id: string) =>
  emu.data<Session>('GET', `/session/info/${id}`, { headers: xKey(DEMO_PLATFORM_KEY) });

describe('session stream', () => {
  it('sends a snapshot, replays the session, streams 5 new messages, completes and closes 1000', async () => {
    const { frames, close } = await openStream(streamPath(sid, DEMO_PLATFORM_KEY));
    expect(first(frames)).toEqual({
      type: 'session.snapshot',
      session_id: sid,
      status: session.status,
      message_count: 25,
    });
    expect(frames.at(-1)).toEqual({ type: 'session.status', session_id: sid, status: 'completed' });
    expect(close).toEqual({ code: 1000, reason: 'stream complete' });
    expect(frames.every((f) => f.session_id === sid)).toBe(true);
    const streamed = messagesOf(frames);
    expect(streamed).toHaveLength(30);
    expect(streamed.slice(0, 25)).toEqual(session.messages);
    const fresh = streamed.slice(25);
    const lastRound = at(session.messages, 24).session_round;
    for (const m of fresh) {
      expect(m).toMatchObject({ source: 'agent', type: 'text' });
      expect(m.session_round).toBeGreaterThan(lastRound);
      expect(m.content.length).toBeGreaterThan(0);
    }
    expect(new Set(fresh.map((m) => m.message_id)).size).toBe(5);
    // The streamed messages are stored: later reads see them and the new status.
    const after = await info(sid);
    expect(after.status).toBe('completed');
    expect(after.messages).toEqual(streamed);
  });

  it('streams a new, empty session and another one at the same time', async () => {
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: xKey(DEMO_PLATFORM_KEY),
      body: { team_id: first(seeded.demo.teams).team_id, task: 'stream me' },
    });
    const otherSession = first(seeded.other.sessions);
    const [mine, theirs] = await Promise.all([
      openStream(streamPath(session_id, DEMO_PLATFORM_KEY)),
      openStream(streamPath(otherSession.session_id, OTHER_PLATFORM_KEY)),
    ]);
    expect(first(mine.frames)).toMatchObject({ status: 'active', message_count: 0 });
    expect(messagesOf(mine.frames)).toHaveLength(5);
    expect(first(messagesOf(mine.frames)).session_round).toBe(1);
    expect(mine.close?.code).toBe(1000);
    expect(messagesOf(theirs.frames)).toHaveLength(otherSession.messages.length + 5);
    expect(theirs.close?.code).toBe(1000);
  });

  it('stops streaming when the client closes', async () => {
    const early = await openStream(streamPath(sid, DEMO_PLATFORM_KEY), { closeAfter: 1 });
    expect(early.close?.code).toBe(1000);
    await new Promise((resolve) => setTimeout(resolve, 700));
    const after = await info(sid);
    expect(after.messages).toHaveLength(25);
    expect(after.status).toBe(session.status);
  });

  it('refuses the upgrade with the 401 body for a missing or unknown key', async () => {
    for (const path of [`/session/ws/${sid}`, streamPath(sid, 'sk-emu-bad')]) {
      const r = await openStream(path);
      expect(r.refused).toEqual({ status: 401, body: UNAUTHORIZED_TEXT });
      expect(r.openedAfter).toBeUndefined();
    }
  });

  it('opens then closes with 4404 for an unknown or another account’s session', async () => {
    for (const path of [
      streamPath(sid, OTHER_PLATFORM_KEY),
      streamPath('nope', DEMO_PLATFORM_KEY),
    ]) {
      const r = await openStream(path);
      expect(r.openedAfter).toBeDefined();
      expect(r.frames).toEqual([]);
      expect(r.close).toEqual({ code: 4404, reason: 'session not found' });
    }
  });

  it('refuses an upgrade on any other path with the 404 envelope', async () => {
    const r = await openStream(`/session/ws/${sid}/extra?api_key=${DEMO_PLATFORM_KEY}`);
    expect(r.refused).toEqual({ status: 404, body: '{"code":404,"msg":"Not Found","data":null}' });
  });

  it('records each upgrade with its path, query and headers', async () => {
    await openStream(streamPath('nope', DEMO_PLATFORM_KEY), { requestId: 'rid-ws' });
    await openStream(streamPath(sid, 'bad'), { requestId: 'rid-ws' });
    const recs = await emu.control<RecordedRequest[]>('GET', '/requests?request_id=rid-ws');
    expect(recs.map((r) => [r.method, r.path, r.query.api_key, r.body])).toEqual([
      ['GET', '/session/ws/nope', DEMO_PLATFORM_KEY, null],
      ['GET', `/session/ws/${sid}`, 'bad', null],
    ]);
    expect(first(recs).headers).toMatchObject({ upgrade: 'websocket', 'x-request-id': 'rid-ws' });
  });
});

describe('session stream faults', () => {
  const faulted = async (spec: Record<string, unknown>, rid: string, closeAfter?: number) => {
    await emu.control('POST', '/faults', { request_id: rid, ...spec });
    return openStream(streamPath(sid, DEMO_PLATFORM_KEY), {
      requestId: rid,
      ...(closeAfter === undefined ? {} : { closeAfter }),
    });
  };

  it('reset destroys the connection before the upgrade', async () => {
    const r = await faulted({ kind: 'reset' }, 'rid-ws-reset');
    expect(r.error).toBeInstanceOf(Error);
    expect(r.openedAfter).toBeUndefined();
  });

  it('hang delays the upgrade, then streams normally', async () => {
    const r = await faulted({ kind: 'hang', delay_ms: 300 }, 'rid-ws-hang', 1);
    expect(r.openedAfter).toBeGreaterThanOrEqual(290);
    expect(first(r.frames).type).toBe('session.snapshot');
  });

  it('other kinds refuse the upgrade with the fault status and an envelope', async () => {
    const r = await faulted({ kind: 'status', status: 503 }, 'rid-ws-503');
    expect(r.refused).toEqual({
      status: 503,
      body: '{"code":503,"msg":"emulated failure","data":null}',
    });
    const html = await faulted({ kind: 'html' }, 'rid-ws-html');
    expect(html.refused?.status).toBe(500);
  });
});

describe('shutdown', () => {
  it('close() ends open streams at once', async () => {
    const own = await startEmulator({ port: 0 });
    const stream = openStream(streamPath(sid, DEMO_PLATFORM_KEY), { base: own.url });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await own.close();
    const r = await stream;
    expect(Date.now() - started).toBeLessThan(500);
    expect(r.close?.code).toBe(1006);
    expect(messagesOf(r.frames).length).toBeLessThan(30);
  });
});
