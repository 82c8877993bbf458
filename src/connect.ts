/**
 * HTTP CONNECT asks for a tunnel. workerd opens it (answering 200) before the
 * Worker can refuse, so the refusal goes inside it: an HTTP 405 with the
 * platform envelope (code 40500), then the tunnel closes. (On Cloudflare's
 * edge CONNECT does not reach Workers at all.)
 */
import { ERRORS } from './errors';

export async function refuseTunnel(socket: Socket): Promise<void> {
  const body = JSON.stringify({
    code: ERRORS.METHOD_NOT_ALLOWED.code,
    msg: 'CONNECT is not supported: this is an HTTP API gateway',
    data: { request_id: crypto.randomUUID() },
  });
  const response =
    'HTTP/1.1 405 Method Not Allowed\r\n' +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${new TextEncoder().encode(body).byteLength}\r\n` +
    'Allow: GET, POST, PUT, DELETE, PATCH, OPTIONS\r\n' +
    'Connection: close\r\n\r\n' +
    body;
  const writer = socket.writable.getWriter();
  try {
    await writer.write(new TextEncoder().encode(response));
    await writer.close();
  } finally {
    await socket.close().catch(() => undefined);
  }
}
