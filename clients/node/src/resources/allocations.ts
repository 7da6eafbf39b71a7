import { randomUUID } from 'node:crypto'
import type { RequestOptions } from '../core.js'
import type { RequestBody } from '../types.js'
import { Resource } from './resource.js'

export type AllocationParams = RequestBody<'/funds/allocations', 'post'>

export interface AllocationOptions extends RequestOptions {
  /**
   * The Idempotency-Key (1–255 printable ASCII): your own stable id for this payment (an order id) makes the call
   * safe to repeat across processes and restarts. Default: a new UUID per call, kept for all of its retries.
   */
  idempotencyKey?: string
}

export class Allocations extends Resource {
  /**
   * POST /funds/allocations: allocate an amount paid against a quote. Every attempt carries the same
   * Idempotency-Key, so a retry (after a dropped connection, 409 IDEMPOTENCY_KEY_IN_USE, 429 or 503) never allocates
   * twice: the API replays the first answer (`result.lastResponse.replayed`).
   */
  create(params: AllocationParams, options: AllocationOptions = {}) {
    const { idempotencyKey = randomUUID(), ...rest } = options
    return this.core.request('post', '/funds/allocations', { body: params, idempotencyKey, retry: 'idempotent' }, rest)
  }

  /** GET /funds/allocations/:id: the allocation, as created. */
  retrieve(allocationId: string, options?: RequestOptions) {
    return this.core.request('get', '/funds/allocations/{id}', { params: { id: allocationId } }, options)
  }

  /**
   * POST /funds/allocations/:id/reverse: the full reversal. Retried like a read: the API reverses an allocation at
   * most once, so a retry after a lost answer cannot reverse twice (it may then answer 409 ALREADY_REVERSED: see
   * `error.attempts > 1`).
   */
  reverse(allocationId: string, options?: RequestOptions) {
    return this.core.request('post', '/funds/allocations/{id}/reverse', { params: { id: allocationId }, retry: 'idempotent' }, options)
  }
}
