/**
 * `report.*`: the reports the platform writes about a product, and the category
 * taxonomy they refer to (the current client's dashboard, PLATFORM.md version 0.3.2;
 * x-api-key).
 */
import * as z from 'zod';
import type { PlatformOperation } from '../types/operations';
import { opaqueId, textField, urlField } from './schemas';

/** Bounds of a report update (docs/BOUNDS.md). */
export const REPORT_TEXT_MAX_CHARS = 5000;
export const REPORT_LIST_MAX = 100;

const reportParams = z.object({ report_id: opaqueId('report_id') });

/** A list field of a report: at most REPORT_LIST_MAX items. */
const listOf = <T extends z.ZodType>(name: string, item: T) =>
  z
    .array(item, { error: `${name} must be a list` })
    .max(REPORT_LIST_MAX, `${name} must hold at most ${REPORT_LIST_MAX} items`)
    .optional();

const text = (name: string) => textField(name, REPORT_TEXT_MAX_CHARS);

/** A category's id (GET /dashboard/categories): a non-negative integer. */
const categoryId = z
  .int({ error: 'a category id must be a non-negative integer' })
  .min(0, 'a category id must be a non-negative integer');

/**
 * The report fields a client may change (PLATFORM.md: "an object of report fields to change"):
 * those the report answer names, less its id; at least one. Personas, profiles and
 * competitors are lists whose items the platform does not describe: any JSON.
 */
const reportUpdate = z
  .strictObject({
    product_name: textField('product_name', 200, 1).optional(),
    target_description: text('target_description').optional(),
    keywords: listOf('keywords', textField('keywords[]', 200, 1)),
    user_personas: listOf('user_personas', z.unknown()),
    user_profiles: listOf('user_profiles', z.unknown()),
    competitors: listOf('competitors', z.unknown()),
    recommended_campaigns: listOf(
      'recommended_campaigns',
      z.strictObject({ name: textField('name', 200, 1), description: text('description') }),
    ),
    related_links: listOf('related_links', urlField('related_links[]')),
    related_industries: listOf(
      'related_industries',
      z.strictObject({
        level1: z.strictObject({ id: categoryId }),
        level2: z.array(categoryId).max(REPORT_LIST_MAX),
      }),
    ),
  })
  .refine((body) => Object.values(body).some((v) => v !== undefined), {
    message: 'name at least one report field to change',
  });

export const reportOperations: PlatformOperation[] = [
  {
    // Changed by report.update through the gateway: a cached copy would hide the change.
    id: 'report.info',
    title: 'Get a report',
    description:
      "The report `report_id` (from product.info's analysis_result): the product's name, target description, keywords, user personas and profiles, competitors, recommended campaigns, related links and industries.",
    method: 'GET',
    path: '/dashboard/report/info/:report_id',
    credential: 'x-api-key',
    group: 'reports',
    params: reportParams,
  },
  {
    id: 'report.update',
    title: 'Change fields of a report',
    description:
      'Changes fields of the report `report_id`: send only those to change, at least one, among product_name, target_description, keywords, user_personas, user_profiles, competitors, recommended_campaigns, related_links and related_industries (category ids from report.categories). Answers the report as changed.',
    effect: { destructive: true },
    method: 'POST',
    path: '/dashboard/report/update/:report_id',
    credential: 'x-api-key',
    group: 'reports',
    params: reportParams,
    body: reportUpdate,
  },
  {
    // The category taxonomy: the same for every caller of a key, and it rarely changes.
    id: 'report.categories',
    title: 'The category taxonomy',
    description:
      "The platform's category tree: each category's id, its names in Chinese and English, its description and level, and its subcategories. A report's related_industries name these ids.",
    method: 'GET',
    path: '/dashboard/categories',
    credential: 'x-api-key',
    group: 'reports',
    cache: { ttl_s: 3600, grace_s: 86_400 },
  },
];
