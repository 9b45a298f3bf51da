import { ProblemError } from '../http/problems.js';

/**
 * The problem for an order the caller does not have. Another key's order is not found, never
 * forbidden: its existence is not disclosed.
 */
export function notFound(orderId: number): ProblemError {
  return new ProblemError('not-found', `You have no order ${orderId}.`);
}
