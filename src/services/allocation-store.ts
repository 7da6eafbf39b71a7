// Where allocations are kept. Concurrent inserts (those without a tax receipt) share one statement, and so do
// concurrent Idempotency-Key lookups; every caller is answered only after the statement holding its item has
// completed, so nothing is acknowledged before it is committed.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import {
  findAllocationById,
  findAllocationsByKeys,
  insertAllocations,
  insertAllocationWithReceipt,
  insertReversal,
  type Allocation,
  type AllocationDraft,
  type AllocationWrite,
  type NewTaxReceipt,
  type Reversal,
} from '../db/repositories/allocations.js'
import type { RecordEventDraft } from '../db/repositories/webhooks.js'
import { Batcher } from './batcher.js'

export interface IdempotencyKeyRef {
  organisationId: string
  idempotencyKey: string
}

export class AllocationStore {
  private readonly keys: Batcher<IdempotencyKeyRef, Allocation | undefined>
  private readonly writer: Batcher<AllocationDraft, AllocationWrite>

  constructor(private readonly db: Kysely<Database>) {
    this.keys = new Batcher((refs) => findAllocationsByKeys(this.db, refs))
    this.writer = new Batcher((allocations) => insertAllocations(this.db, allocations))
  }

  /** The allocation an organisation made with this Idempotency-Key, if any. */
  findByKey(ref: IdempotencyKeyRef): Promise<Allocation | undefined> {
    return this.keys.submit(ref)
  }

  /**
   * Writes the allocation (with its receipt and its webhook event, in the same statement) unless its key was already
   * used; then says so, with the allocation stored for the key when the statement could see it.
   */
  insert(draft: AllocationDraft, receipt: NewTaxReceipt | null): Promise<AllocationWrite> {
    return receipt ? insertAllocationWithReceipt(this.db, draft, receipt) : this.writer.submit(draft)
  }

  findById(id: string): Promise<Allocation | undefined> {
    return findAllocationById(this.db, id)
  }

  /** Records the reversal and its webhook event unless the allocation already has one; true when this call recorded it. */
  insertReversal(reversal: Reversal, event: RecordEventDraft): Promise<boolean> {
    return insertReversal(this.db, reversal, event)
  }

  /** Resolves once every lookup and insert submitted so far has settled. */
  async drain(): Promise<void> {
    await Promise.all([this.writer.drain(), this.keys.drain()])
  }
}
