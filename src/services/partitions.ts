// Partition maintenance (docs/partitioning.md): creates the months ahead of each partitioned table and drops, by
// whole partitions, the months retention allows — after copying a month's allocated quotes into retained_quotes, and
// never a tax-receipt month with a receipt still pending. Runs at start and every interval in each API process; an
// advisory lock lets one process work at a time. A failure is logged and counted; serving goes on (the default
// partitions take any row whose month has no partition yet).
import type { Kysely } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../db/database.js'
import {
  countPendingReceipts,
  createPartition,
  detachPartition,
  dropDetachedTable,
  findDetachedPartitions,
  listPartitions,
  retainAllocatedQuotes,
  withMaintenanceLock,
  type PartitionRow,
} from '../db/repositories/partitions.js'
import {
  isExpired,
  LEDGER_TABLES,
  monthEnd,
  monthOfPartition,
  monthStart,
  monthsToCreate,
  partitionName,
  PARTITION_KEY,
  PARTITIONED_TABLES,
  QUOTE_DROP_GRACE_MS,
  earliestAllocationNaming,
  type Month,
  type PartitionedTable,
  type Retention,
} from '../domain/partitions.js'
import type { Metrics } from '../metrics.js'
import { PeriodicRun } from './periodic.js'

/** pg_try_advisory_lock's key for partition maintenance ("canopy partitions"). */
const LOCK_KEY = 0x63_70_61_72
/** How long a detach waits for the table's lock before giving up until the next run. */
const DETACH_LOCK_TIMEOUT_MS = 2000

export interface MaintenanceResult {
  created: string[]
  dropped: string[]
  /** Rows a new partition took over from the default partition (written while their month had none). */
  movedFromDefault: number
  /** Allocated quotes copied into retained_quotes before their month was dropped. */
  retainedQuotes: number
  /** Expired months kept, and why. */
  kept: { partition: string; reason: string }[]
}

export interface MaintenanceDeps {
  db: Kysely<Database>
  clock: () => Date
  retention: Retention
}

/** One maintenance run; undefined when another process is running one. */
export async function maintainPartitions(deps: MaintenanceDeps): Promise<MaintenanceResult | undefined> {
  return withMaintenanceLock(deps.db, LOCK_KEY, async (db) => {
    const now = deps.clock()
    const result: MaintenanceResult = { created: [], dropped: [], movedFromDefault: 0, retainedQuotes: 0, kept: [] }
    for (const table of PARTITIONED_TABLES) {
      const existing = new Set((await listPartitions(db, table)).map((p) => p.name))
      for (const month of monthsToCreate(now)) {
        const name = partitionName(table, month)
        if (existing.has(name)) continue
        // The ledger's rows are referenced by key (a reversal's allocation, a delivery's event) and are not moved: a
        // month whose rows the default partition already holds keeps them there.
        const ledger = LEDGER_TABLES.has(table)
        const range = { from: monthStart(month), to: monthEnd(month) }
        const { moved, waiting } = await createPartition(db, table, PARTITION_KEY[table], name, range, !ledger)
        if (waiting > 0) {
          result.kept.push({ partition: name, reason: `not created: ${waiting} row(s) of this month are in ${table}_default` })
          continue
        }
        result.created.push(name)
        result.movedFromDefault += moved
      }
      // A run cut short between a detach and its drop left the table behind: finish it.
      for (const name of await findDetachedPartitions(db, table)) {
        if (table === 'quotes') {
          // Its month bounds the allocations read; a name that gives none reads them all rather than copy nothing.
          const month = monthOfPartition(table, name)
          result.retainedQuotes += await retainAllocatedQuotes(db, name, month ? earliestAllocationNaming(month) : new Date(0))
        }
        await dropDetachedTable(db, name)
        result.dropped.push(name)
      }
      for (const partition of await listPartitions(db, table)) {
        const month = monthOfPartition(table, partition.name)
        if (!month || !isExpired(table, month, now, deps.retention)) continue
        if (table === 'tax_receipts') {
          const pending = await countPendingReceipts(db, partition.name)
          if (pending > 0) {
            result.kept.push({ partition: partition.name, reason: `${pending} tax receipt(s) still pending` })
            continue
          }
        }
        await dropPartition(db, table, partition, month, deps.clock, result)
      }
    }
    return result
  })
}

async function dropPartition(
  db: Kysely<Database>,
  table: PartitionedTable,
  partition: PartitionRow,
  month: Month,
  clock: () => Date,
  result: MaintenanceResult,
) {
  if (table !== 'quotes') {
    await detachPartition(db, table, partition.name, DETACH_LOCK_TIMEOUT_MS)
  } else {
    // The month's allocated quotes are copied before the detach, outside its lock: no allocation can name one any more
    // (isExpired keeps a day's grace past their retention). Copied again after the detach from the allocations of the
    // last day (the current month's, not the whole window's), for what a clock or a setting changed between processes
    // could still have let through.
    const lastDay = new Date(clock().getTime() - QUOTE_DROP_GRACE_MS)
    result.retainedQuotes += await retainAllocatedQuotes(db, partition.name, earliestAllocationNaming(month))
    await detachPartition(db, table, partition.name, DETACH_LOCK_TIMEOUT_MS)
    result.retainedQuotes += await retainAllocatedQuotes(db, partition.name, lastDay)
  }
  await dropDetachedTable(db, partition.name)
  result.dropped.push(partition.name)
}

export interface PartitionListing {
  table: PartitionedTable
  partitions: PartitionRow[]
}

export async function partitionListing(db: Kysely<Database>): Promise<PartitionListing[]> {
  return Promise.all(PARTITIONED_TABLES.map(async (table) => ({ table, partitions: await listPartitions(db, table) })))
}

export interface PartitionWorkerOptions extends MaintenanceDeps {
  intervalMs: number
  log: FastifyBaseLogger
  metrics: Metrics
}

/** Runs maintenance at start and every `intervalMs` (PARTITION_MAINTENANCE=false turns it off in a process). */
export class PartitionMaintenanceWorker {
  private readonly periodic: PeriodicRun

  constructor(private readonly options: PartitionWorkerOptions) {
    // A failed run is logged and counted by runOnce; the next comes at the interval all the same.
    this.periodic = new PeriodicRun(() =>
      this.runOnce().then(
        () => options.intervalMs,
        () => options.intervalMs,
      ),
    )
  }

  start(): void {
    this.periodic.start()
  }

  /** Stops and waits a moment for a run in progress: a run cut short is finished by the next one. */
  stop(): Promise<void> {
    return this.periodic.stop()
  }

  /** One run now, counted and logged as the scheduled ones are; rejects with its error. */
  async runOnce(): Promise<MaintenanceResult | undefined> {
    const { log, metrics } = this.options
    try {
      const result = await maintainPartitions(this.options)
      metrics.partitionMaintenanceSucceeded(this.options.clock())
      if (result && (result.created.length > 0 || result.dropped.length > 0 || result.kept.length > 0)) {
        log.info({ ...result }, 'partition maintenance')
      }
      return result
    } catch (error) {
      metrics.partitionMaintenanceFailed()
      log.error({ err: error }, 'partition maintenance failed; serving goes on, it is tried again at the next interval')
      throw error
    }
  }
}
