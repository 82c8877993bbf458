/**
 * `product.*`: products the platform analyses and the research results of their
 * queries (the current client's dashboard, PLATFORM.md version 0.3.2; x-api-key).
 */
import * as z from 'zod';
import type { PlatformOperation } from '../types/operations';
import { opaqueId, textField, urlField } from './schemas';

/** Longest product text and most attachments accepted (docs/BOUNDS.md). */
export const PRODUCT_MAX_CHARS = 2000;
export const ATTACHMENTS_MAX = 20;

const attachment = z.strictObject({
  file_name: textField('file_name', 255, 1),
  file_url: urlField('file_url'),
});

export const productOperations: PlatformOperation[] = [
  {
    id: 'product.create',
    title: 'Submit a product for analysis',
    description:
      'Submits a product for the platform to research: `product`, its description, and optional `attachments` of `{file_name, file_url}`. Answers `{product_id, product_name, status}`; poll product.info with the product_id until its status is completed, then read the report with report.info.',
    effect: { openWorld: true },
    method: 'POST',
    path: '/dashboard/product/create',
    credential: 'x-api-key',
    group: 'products',
    // Starts an analysis on the platform (the client then polls product.info): like a session.
    cost: 5,
    body: z.strictObject({
      product: textField('product', PRODUCT_MAX_CHARS, 1),
      attachments: z
        .array(attachment, {
          error: `attachments must be a list of at most ${ATTACHMENTS_MAX} {file_name, file_url}`,
        })
        .max(ATTACHMENTS_MAX, `attachments must hold at most ${ATTACHMENTS_MAX} files`)
        .optional(),
    }),
  },
  {
    // Polled every 20 s by the client until its status is completed: never cached.
    id: 'product.info',
    title: "A product's analysis: its status and report",
    description:
      "The analysis of the product `product_id` (from product.create): `status` is pending until the research is done, then completed, with the report's id in `analysis_result.report_id` (report.info reads it). Never cached: poll it, every 20 s is enough.",
    method: 'GET',
    path: '/dashboard/product/candidates/:product_id/info',
    credential: 'x-api-key',
    group: 'products',
    params: z.object({ product_id: opaqueId('product_id') }),
  },
  {
    // Results grow while the research runs, and carry media: not cached.
    id: 'product.query_results',
    title: 'Research results of a query',
    description:
      'The posts, with their counts and media, that the research query `query_id` has found so far: they grow while the research runs.',
    method: 'GET',
    path: '/dashboard/product/query/results/:query_id/lists',
    credential: 'x-api-key',
    group: 'products',
    params: z.object({ query_id: opaqueId('query_id') }),
  },
];
