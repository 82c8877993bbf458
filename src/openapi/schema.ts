/**
 * zod to JSON Schema for the OpenAPI documents: what a caller sends (the
 * schemas' input side), with the wire form a field declares for itself
 * (operations/schemas.ts `WIRE`: an integer that travels as query text, say), and
 * what the gateway answers (the output side).
 */
import * as z from 'zod';
import { WIRE } from '../operations/schemas';

export type JsonSchema = Record<string, unknown>;

export function inputSchema(schema: z.ZodType): JsonSchema {
  const json: JsonSchema = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ jsonSchema }) => {
      const wire = Reflect.get(jsonSchema, WIRE);
      if (!wire || typeof wire !== 'object') return;
      for (const key of Object.keys(jsonSchema)) Reflect.deleteProperty(jsonSchema, key);
      Object.assign(jsonSchema, wire);
    },
  });
  const { $schema: _dialect, ...rest } = json;
  return rest;
}

/** What a schema makes: the JSON an answer holds (an integer without zod's safe-integer bounds). */
export function outputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest }: JsonSchema = z.toJSONSchema(schema, {
    io: 'output',
    unrepresentable: 'any',
    override: ({ jsonSchema }) => {
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  });
  return rest;
}

/** An object schema's properties and required names (path and query parameters). */
export function fieldsOf(schema: z.ZodType): {
  properties: Record<string, JsonSchema>;
  required: string[];
} {
  const json = inputSchema(schema);
  const properties: Record<string, JsonSchema> = {};
  const raw = json.properties;
  if (raw && typeof raw === 'object') {
    for (const [name, value] of Object.entries(raw)) {
      if (value && typeof value === 'object') properties[name] = { ...value };
    }
  }
  const required = Array.isArray(json.required) ? json.required.map(String) : [];
  return { properties, required };
}

/** Path or query parameters from an object schema (path ones are always required). */
export function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const { properties, required } = fieldsOf(schema);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.includes(name),
    schema: s,
  }));
}

/** `requestBody` of an operation with a JSON body, or nothing. */
export const jsonBody = (schema: z.ZodType | undefined) =>
  schema
    ? {
        requestBody: {
          required: true,
          content: { 'application/json': { schema: inputSchema(schema) } },
        },
      }
    : {};
