// Table statistics where autovacuum does not keep them (docs/table-statistics.md): every interval, the tables that
// autovacuum's analyse rule says are due — and that autovacuum does not look after — are analysed. Without it, a
// partition analysed while empty (the current month's, by the migration that analyses the partitioned tables) keeps
// every plan made on it, such as a foreign key's check, as a scan of the whole partition, one per row written. On
// Postgres only: the embedded database serves one connection and is not where this matters. An advisory lock lets one
// process work at a time; a failure is logged and serving goes on.
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { withMaintenanceLock } from '../db/repositories/partitions.js'
import { analyseTable, readTableActivity } from '../db/repositories/table-statistics.js'
import { tablesToAnalyse } from '../domain/table-statistics.js'

/** pg_try_advisory_lock's key for table statistics ("csta"). */
const LOCK_KEY = 0x63_73_74_61
/** After a failed run, the next one waits at least this long (an ANALYZE cut off by the statement timeout would be). */
const RETRY_AFTER_FAILURE_MS = 60_000
/** How long stop() waits for a run in progress. */
const STOP_WAIT_MS = 500

/** The tables one run analysed; undefined when another process was running one. */
export async function analyseDueTables(db: Kysely<Database>): Promise<string[] | undefined> {
  return withMaintenanceLock(db, LOCK_KEY, async (conn) => {
    const { settings, tables } = await readTableActivity(conn)
    const due = tablesToAnalyse(tables, settings)
    for (const table of due) await analyseTable(conn, table)
    return due
  })
}

export interface TableStatisticsWorkerOptions {
  db: Kysely<Database>
  intervalMs: number
  log: FastifyBaseLogger
}

/** Runs analyseDueTables every `intervalMs` (TABLE_STATISTICS_WORKER=false turns it off in a process). */
export class TableStatisticsWorker {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<number> | undefined
  private stopped = true

  constructor(private readonly options: TableStatisticsWorkerOptions) {}

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.schedule(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await Promise.race([this.running, delay(STOP_WAIT_MS, undefined, { ref: false })])
  }

  /** One run now, logged as the scheduled ones are; rejects with its error. */
  async runOnce(): Promise<string[] | undefined> {
    const analysed = await analyseDueTables(this.options.db)
    if (analysed && analysed.length > 0) this.options.log.debug({ analysed }, 'table statistics: analysed')
    return analysed
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => this.tick(), delayMs)
    this.timer.unref()
  }

  private tick(): void {
    if (this.stopped) return
    this.running = this.runOnce().then(
      () => this.options.intervalMs,
      (error: unknown) => {
        this.options.log.warn({ err: error }, 'table statistics: a run failed; serving goes on, it is tried again later')
        return Math.max(this.options.intervalMs, RETRY_AFTER_FAILURE_MS)
      },
    )
    void this.running.then((next) => {
      if (!this.stopped) this.schedule(next)
    })
  }
}
