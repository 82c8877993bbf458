/**
 * The operator API for the console Worker, over a Service Binding to this
 * named entrypoint (docs/DEPLOY.md, "The console behind Cloudflare Access").
 * Nothing on the internet reaches a named entrypoint, so with
 * OPERATOR_API=binding the gateway's own hostname refuses /admin/* while the
 * console, behind Access, still reaches it. Authentication is unchanged: the
 * Access JWT (or ADMIN_TOKEN) the console Worker passes on is verified here.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';
import type { Hono } from 'hono';
import { oncePer } from './once-per';
import type { Bindings, HonoEnv } from './types/context';

/** The same bindings, with the operator API on: one object per env, so settings parse once. */
const throughBinding = oncePer((env: Bindings): Bindings => ({ ...env, OPERATOR_API: 'public' }));

export function operatorEntrypoint(app: Hono<HonoEnv>) {
  return class OperatorApi extends WorkerEntrypoint<Bindings> {
    override fetch(request: Request): Response | Promise<Response> {
      // Only the operator API: the platform routes are for the gateway's own hostname.
      if (!new URL(request.url).pathname.startsWith('/admin/')) {
        return Response.json(
          { code: 40400, msg: 'No route: the console reaches only /admin/', data: null },
          { status: 404 },
        );
      }
      return app.fetch(request, throughBinding(this.env), this.ctx);
    }
  };
}
