/**
 * What the PlanBook (plan-book.ts) tells a tenant's TenantGuard about its plan
 * (docs/LIMITS.md, "Plans"). Every decision of the book (a plan changed, a
 * tenant joined or left one) takes the next number of one counter, and a guard
 * keeps a push only when its number is higher than the last it kept: pushes
 * that arrive out of order (a retry, two rollouts at once) never undo a later
 * decision.
 */
import type { Limits } from '../../metering/policy';

export interface PlanPush {
  /** The tenant's plan now; null: it left its plan. */
  name: string | null;
  /** The book's decision number. */
  version: number;
  /** The plan's limits at that decision (null when it left). */
  limits: Limits | null;
}

/** A plan's name: as a policy's, 1..32 of a-z 0-9 _ -, from a letter. */
export const PLAN_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
