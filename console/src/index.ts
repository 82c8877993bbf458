/**
 * The console Worker: the operator console on its own hostname, behind
 * Cloudflare Access (docs/DEPLOY.md, "The console behind Cloudflare Access").
 * Static assets (the console's page) are served before this code runs; what
 * reaches it is the operator API, passed to the gateway's OperatorApi
 * entrypoint over a Service Binding, headers and all (Access's JWT included),
 * and the gateway verifies the caller itself. Nothing else is served.
 */
interface Env {
  GATEWAY: Fetcher;
}

export default {
  fetch(request: Request, env: Env): Response | Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/admin/')) return env.GATEWAY.fetch(request);
    if (pathname === '/') return Response.redirect(new URL('/console/', request.url).href, 302);
    return Response.json(
      { code: 40400, msg: 'No such page: the console is at /console/', data: null },
      { status: 404 },
    );
  },
} satisfies ExportedHandler<Env>;
