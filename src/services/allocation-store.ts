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
  type NewTaxReceipt,
  type Reversal,
} from '../db/repositories/allocations.js'
import type { RecordEventDraft } from '../db/repositories/webhooks.js'
import { Batcher } from './batcher.js'
import { createCache } from './cache.js'

export interface IdempotencyKeyRef {
  organisationId: string
  idempotencyKey: string
}

/** How many keys known to be used this process remembers (about 100 bytes each); the least recently used go first. */
const KNOWN_USED_KEYS_MAX = 10_000

/**
 * How many allocations this process keeps by key for replays (a few kilobytes each): the most recently replayed. Not
 * the ones it writes: kept for the next thousand allocations, each outlived the young generation and became garbage
 * of the old one (docs/write-costs.md, "Only replayed allocations kept"), while few of them are ever replayed. A key this process wrote is known used, so its first replay skips pricing and is
 * one batched lookup; its later replays are answered from here without a database read.
 */
const RECENT_ALLOCATIONS_MAX = 1_000

/**
 * Allocation statements one process runs at once. Each commits on its own, and a commit waits for its WAL to reach the
 * disk; allocations arriving meanwhile wait for the next statement and share its commit instead of each starting one
 * (docs/write-costs.md, "One allocation statement at a time": at 10 and 50 connections, one at a time served 12–13%
 * more new allocations than no bound).
 */
const ALLOCATION_STATEMENTS_IN_FLIGHT = 1

/**
 * What inserting one allocation did: whether it was written, and whether its statement (shared with other allocations)
 * wrote webhook deliveries, for which the webhook worker is woken; an allocation nobody listens for wakes nothing.
 */
export interface AllocationWrite {
  written: boolean
  deliveries: boolean
}

const keyOf = (ref: IdempotencyKeyRef): string => `${ref.organisationId}\n${ref.idempotencyKey}`

export class AllocationStore {
  private readonly keys: Batcher<IdempotencyKeyRef, Allocation | undefined>
  private readonly writer: Batcher<AllocationDraft, AllocationWrite>
  /**
   * Keys this process has seen used, by its own writes or lookups. A key once used stays used (its row is never
   * deleted while its allocation is kept), so a request with one of these is a replay for certain and can be answered
   * from its stored allocation without being priced; a key not here may still be used (by another process, or long
   * ago), which the write finds out.
   */
  private readonly knownUsed = createCache<true>({ max: KNOWN_USED_KEYS_MAX })
  /**
   * Allocations by key, as this process read them for a replay. An allocation never changes once written (a reversal
   * is a record of its own), so a replay answered from here is the very allocation the database holds.
   */
  private readonly recent = createCache<Allocation>({ max: RECENT_ALLOCATIONS_MAX })

  constructor(private readonly db: Kysely<Database>) {
    this.keys = new Batcher((refs) => findAllocationsByKeys(this.db, refs))
    this.writer = new Batcher(
      async (allocations) => {
        const { written, deliveries } = await insertAllocations(this.db, allocations)
        return written.map((w): AllocationWrite => ({ written: w, deliveries: deliveries > 0 }))
      },
      { maxInFlight: ALLOCATION_STATEMENTS_IN_FLIGHT },
    )
  }

  /** The allocation an organisation made with this Idempotency-Key, if any. */
  async findByKey(ref: IdempotencyKeyRef): Promise<Allocation | undefined> {
    const recent = this.recent.get(keyOf(ref))
    if (recent) return recent
    const found = await this.keys.submit(ref)
    if (found) this.remember(ref, found)
    return found
  }

  /** Whether this process has seen the key used (see `knownUsed`). */
  isKnownUsed(ref: IdempotencyKeyRef): boolean {
    return this.knownUsed.get(keyOf(ref)) === true
  }

  /**
   * Writes the allocation (with its receipt and its webhook event, in the same statement) unless its key was already
   * used: `written` when this call wrote it, and `deliveries` when its statement wrote webhook deliveries.
   */
  async insert(draft: AllocationDraft, receipt: NewTaxReceipt | null): Promise<AllocationWrite> {
    let write: AllocationWrite
    if (receipt) {
      const { written, deliveries } = await insertAllocationWithReceipt(this.db, draft, receipt)
      write = { written: written[0] === true, deliveries: deliveries > 0 }
    } else {
      write = await this.writer.submit(draft)
    }
    if (write.written) this.knownUsed.set(keyOf(draft.allocation), true)
    return write
  }

  private remember(ref: IdempotencyKeyRef, allocation: Allocation): void {
    const key = keyOf(ref)
    this.knownUsed.set(key, true)
    this.recent.set(key, allocation)
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
