/**
 * The operator API's own OpenAPI document (GET /admin/openapi.json, behind the
 * operator's credentials), made from the operations' definitions (admin/contract.ts):
 * their paths, parameters, bodies and answers from the same zod schemas that
 * validate the requests and type the answers; never written by hand.
 */
import { envelopeSchemaOf, errorEnvelope, openApiPath } from '../openapi/document';
import { jsonBody, outputSchema, parametersOf } from '../openapi/schema';
import { GATEWAY_VERSION } from '../version';
import { ADMIN_OPERATIONS } from './contract';
import type { AdminOperation } from './operation';

type Json = Record<string, unknown>;

let doc: Json | undefined;

/** Made once per isolate, on the first ask. */
export function adminDocument(): Json {
  doc ??= {
    openapi: '3.1.0',
    info: {
      title: 'Agent Platform gateway: operator API',
      version: GATEWAY_VERSION,
      description:
        'Every answer but this document is the envelope `{code, msg, data}`; `code` 0 is ' +
        'success. A viewer (Access role) may call the reads; every change is an admin’s ' +
        '(`x-required-role`). `x-audit-action` names what a change records in the audit log.',
    },
    security: [{ adminToken: [] }, { access: [] }],
    paths: paths(),
    components: {
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        access: {
          type: 'apiKey',
          in: 'header',
          name: 'Cf-Access-Jwt-Assertion',
          description: 'A Cloudflare Access JWT (or the CF_Authorization cookie); docs/CONSOLE.md',
        },
      },
      schemas: { ErrorEnvelope: errorEnvelope() },
    },
  };
  return doc;
}

function paths(): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [name, op] of ADMIN_OPERATIONS) {
    const path = openApiPath(op.path);
    out[path] = { ...out[path], [op.method]: operation(name, op) };
  }
  return out;
}

function operation(name: string, op: AdminOperation): Json {
  const parameters = [...parametersOf(op.params, 'path'), ...parametersOf(op.query, 'query')];
  const answer = outputSchema(op.answer());
  return {
    operationId: name,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    'x-required-role': op.role,
    ...(op.audit ? { 'x-audit-action': op.audit } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...jsonBody(op.body),
    responses: {
      [String(op.status ?? 200)]: {
        description:
          op.envelope === false
            ? op.summary
            : 'The envelope `{code: 0, msg, data}`, with the data.',
        content: {
          'application/json': { schema: op.envelope === false ? answer : envelopeSchemaOf(answer) },
        },
      },
      default: {
        description:
          'An error: the envelope with a documented non-zero code (docs/ERRORS.md) and the ' +
          'request id.',
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } },
        },
      },
    },
  };
}
