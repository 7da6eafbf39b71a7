// Table statistics where autovacuum does not keep them (docs/table-statistics.md): every interval, the tables that
// autovacuum's analyse rule says are due — and that autovacuum does not look after — are analysed. Without it, a
// partition analysed while empty (the current month's, by the migration that analyses the partitioned tables) keeps
// every plan made on it, such as a foreign key's check, as a scan of the whole partition, one per row written. On
// Postgres only: the embedded database serves one connection and is not where this matters. An advisory lock lets one
// process work at a time; a failure is logged and serving goes on.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { withMaintenanceLock } from '../db/repositories/partitions.js'
import { analyseTable, readTableActivity } from '../db/repositories/table-statistics.js'
import { tablesToAnalyse } from '../domain/table-statistics.js'
import { PeriodicRun } from './periodic.js'

/** pg_try_advisory_lock's key for table statistics ("csta"). */
const LOCK_KEY = 0x63_73_74_61
/** After a failed run, the next one waits at least this long (an ANALYZE cut off by the statement timeout would be). */
const RETRY_AFTER_FAILURE_MS = 60_000

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
  private readonly periodic: PeriodicRun

  constructor(private readonly options: TableStatisticsWorkerOptions) {
    this.periodic = new PeriodicRun(() =>
      this.runOnce().then(
        () => options.intervalMs,
        (error: unknown) => {
          options.log.warn({ err: error }, 'table statistics: a run failed; serving goes on, it is tried again later')
          return Math.max(options.intervalMs, RETRY_AFTER_FAILURE_MS)
        },
      ),
    )
  }

  start(): void {
    this.periodic.start()
  }

  stop(): Promise<void> {
    return this.periodic.stop()
  }

  /** One run now, logged as the scheduled ones are; rejects with its error. */
  async runOnce(): Promise<string[] | undefined> {
    const analysed = await analyseDueTables(this.options.db)
    if (analysed && analysed.length > 0) this.options.log.debug({ analysed }, 'table statistics: analysed')
    return analysed
  }
}
