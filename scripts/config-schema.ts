/**
 * `npx tsx scripts/config-schema.ts`: writes docs/config.schema.json, the fleet file's
 * JSON Schema as GET /admin/config/schema serves it (test/config.test.ts compares them).
 */
import { writeFileSync } from 'node:fs';
import * as z from 'zod';
import { fleetFileSchema } from '../src/admin/config-file';

const schema = z.toJSONSchema(fleetFileSchema, { io: 'input', unrepresentable: 'any' });
writeFileSync('docs/config.schema.json', `${JSON.stringify(schema, null, 2)}\n`);
console.log('Wrote docs/config.schema.json');
