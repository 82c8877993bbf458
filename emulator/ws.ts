// The session event stream: GET /session/ws/{session_id}?api_key=<key>, a
// WebSocket on the same port as HTTP. It replays the session, then emits a
// bounded burst of synthetic messages and a final "completed" status.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { UNAUTHORIZED } from './auth';
import { wait } from './faults';
import { envelope } from './http';
import type { EmulatorState } from './store';
import type { Account, Message, Session, SessionFrame } from './types';

const WS_PATH = /^\/session\/ws\/([^/]+)$/;
const TICK_MS = 300;
const SYNTHETIC_MESSAGES = 5; // bounded so a test's stream always ends on its own
const LINES = [
  'Thinking about the next step.',
  'Opening a new page.',
  'Extracting the results table.',
  'Checking the price against the budget.',
  'Writing the final summary.',
];

/** Answers a refused upgrade with a plain HTTP response and closes the socket. */
function refuse(socket: Duplex, status: number, body: unknown, location?: string): void {
  const payload = JSON.stringify(body);
  const extra = location ? `Location: ${location}\r\n` : '';
  socket.end(
    `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
  );
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function synthetic(session: Session, n: number): Message {
  const content = LINES[n % LINES.length]!;
  return {
    message_id: randomUUID(),
    source: 'agent',
    source_type: 'llm',
    source_component: session.team_id,
    content,
    message: { type: 'text', text: content },
    type: 'text',
    created_at: new Date().toISOString(),
    attachments: [],
    session_round: (session.messages.at(-1)?.session_round ?? 0) + 1,
  };
}

export function attachSessionStream(server: Server, state: EmulatorState): { close(): void } {
  const wss = new WebSocketServer({ noServer: true });
  const timers = new Set<NodeJS.Timeout>();
  const handshakes = new Set<Duplex>(); // sockets not yet upgraded: the HTTP server no longer tracks them

  function stream(ws: WebSocket, account: Account, sessionId: string): void {
    const session = account.sessions.find((s) => s.session_id === sessionId);
    if (!session) {
      ws.close(4404, 'session not found');
      return;
    }
    const send = (frame: SessionFrame) => ws.send(JSON.stringify(frame));
    send({
      type: 'session.snapshot',
      session_id: sessionId,
      status: session.status,
      message_count: session.messages.length,
    });
    for (const message of session.messages)
      send({ type: 'message', session_id: sessionId, message });
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < SYNTHETIC_MESSAGES) {
        const message = synthetic(session, sent++);
        session.messages.push(message); // the stream's messages are real: later reads see them
        session.updated_at = message.created_at;
        return send({ type: 'message', session_id: sessionId, message });
      }
      stop();
      session.status = 'completed';
      send({ type: 'session.status', session_id: sessionId, status: 'completed' });
      ws.close(1000, 'stream complete');
    }, TICK_MS);
    const stop = () => {
      clearInterval(timer);
      timers.delete(timer);
    };
    timers.add(timer);
    ws.on('close', stop);
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy()); // a client vanishing mid-handshake must not crash the emulator
    handshakes.add(socket);
    socket.once('close', () => handshakes.delete(socket));
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) headers[name] = String(value);
    state.record({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: null,
    });

    const fault = state.takeFault(url.pathname, headers['x-request-id']);
    if (fault?.kind === 'reset') return void socket.destroy();
    if (fault?.kind === 'hang') {
      const gone = new AbortController();
      socket.once('close', () => gone.abort());
      if (!(await wait(fault.delay_ms, gone.signal))) return;
    } else if (fault)
      return refuse(
        socket,
        fault.status,
        envelope(fault.status, 'emulated failure', null),
        fault.location,
      );

    const match = WS_PATH.exec(url.pathname);
    if (!match) return refuse(socket, 404, envelope(404, 'Not Found', null));
    const found = state.findKey(url.searchParams.get('api_key') ?? '');
    if (!found) return refuse(socket, 401, UNAUTHORIZED);
    found.key.last_used_at = new Date().toISOString();
    wss.handleUpgrade(req, socket, head, (ws) => {
      handshakes.delete(socket);
      stream(ws, found.account, safeDecode(match[1]!));
    });
  }

  server.on(
    'upgrade',
    (req: IncomingMessage, socket: Duplex, head: Buffer) => void upgrade(req, socket, head),
  );
  return {
    close() {
      for (const timer of timers) clearInterval(timer);
      timers.clear();
      for (const client of wss.clients) client.terminate();
      for (const socket of handshakes) socket.destroy();
      wss.close();
    },
  };
}
