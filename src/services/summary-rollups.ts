// The rollup worker (docs/summary.md, "Rollups"): adds the records of closed time to the rollups, one UTC day per
// transaction, and moves rolled_until with them. Time has closed once no record of it can still be in flight: a record
// carries the time its API process gave it before writing it, and its statement is bounded (DATABASE_CONNECT_TIMEOUT_MS,
// DATABASE_QUERY_TIMEOUT_MS), so everything older than SUMMARY_ROLLUP_DELAY_SECONDS (validated against those bounds)
// is committed. Every API process runs the worker; the state row's lock (FOR UPDATE SKIP LOCKED) lets one work at a
// time. Nothing here is on the allocation's write path.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Database } from '../db/database.js'
import { isStatementTimeout } from '../db/failures.js'
import {
  addRecordsToRollups,
  countRollupRows,
  deleteRollups,
  findRollupMismatches,
  findRolledUntil,
  findEarliestRecordTime,
  findNextRecordTime,
  lockRollupState,
  setRolledUntil,
  type RollupMismatch,
} from '../db/repositories/allocation-rollups.js'
import { GRAIN_MS } from '../domain/summary.js'
import type { Metrics } from '../metrics.js'
import { PeriodicRun } from './periodic.js'

export interface RollupDeps {
  readonly db: Kysely<Database>
  readonly clock: Clock
  /** How long after a moment its records are rolled up (SUMMARY_ROLLUP_DELAY_SECONDS). */
  readonly delayMs: number
}

export interface RollupProgress {
  /** Every rollup holds the records before this instant (null: nothing is rolled up). */
  rolledUntil: Date | null
  /** Transactions committed (one per UTC day or part of one) and rollup rows they wrote. */
  chunks: number
  rows: number
  /** rolled_until reached the target. */
  caughtUp: boolean
  /** Another process held the state: this call did nothing. */
  busy: boolean
  /** The longest span the next transaction should add (pass it back as `spanMs`): shorter after a statement timeout. */
  spanMs: number
}

const DAY_MS = GRAIN_MS.day
const floorToDay = (t: number): number => t - (((t % DAY_MS) + DAY_MS) % DAY_MS)
/**
 * The shortest span a transaction adds. A span whose statement outlasts the statement timeout (a day of a busy
 * installation, after an outage or a rebuild) is tried again a quarter as long, down to this; each span added in time
 * lets the next be twice as long again, up to a day. Without it, a backlog too large for one statement would fail the
 * same way at every tick and never be rolled up.
 */
export const MIN_ROLLUP_SPAN_MS = 1000
const SHRINK_AFTER_TIMEOUT = 4

/**
 * Rolls up [rolled_until, until): one transaction per UTC day (or part of one: at most `spanMs`, a day by default),
 * each holding the state row's lock, adding that span's records and moving rolled_until, until the target is reached or
 * `budgetMs` has been spent. Never moves rolled_until backwards. With nothing rolled up yet it starts at the UTC day of
 * the earliest record; a span without records moves it on to the UTC day of the next record. A transaction cancelled
 * by the statement timeout rolls back and is tried again over a shorter span (MIN_ROLLUP_SPAN_MS).
 */
export async function rollUpTo(
  db: Kysely<Database>,
  until: Date,
  options: { now: Clock; budgetMs?: number; skipLocked: boolean; spanMs?: number },
): Promise<RollupProgress> {
  const started = performance.now()
  const progress: RollupProgress = {
    rolledUntil: null,
    chunks: 0,
    rows: 0,
    caughtUp: false,
    busy: false,
    spanMs: Math.min(DAY_MS, Math.max(MIN_ROLLUP_SPAN_MS, options.spanMs ?? DAY_MS)),
  }
  const target = until.getTime()
  const overBudget = () => performance.now() - started >= (options.budgetMs ?? Number.POSITIVE_INFINITY)
  for (;;) {
    const spanMs = progress.spanMs
    let step: 'busy' | 'done' | 'more'
    try {
      step = await rollUpSpan(spanMs)
    } catch (error) {
      if (!isStatementTimeout(error) || spanMs <= MIN_ROLLUP_SPAN_MS) throw error
      progress.spanMs = Math.max(MIN_ROLLUP_SPAN_MS, Math.floor(spanMs / SHRINK_AFTER_TIMEOUT))
      if (overBudget()) return progress
      continue
    }
    if (step === 'busy') return { ...progress, busy: true }
    if (step === 'done') return { ...progress, caughtUp: true }
    if (overBudget()) return progress
  }

  function rollUpSpan(spanMs: number): Promise<'busy' | 'done' | 'more'> {
    return db.transaction().execute(async (trx) => {
      const state = await lockRollupState(trx, { skipLocked: options.skipLocked })
      if (!state) return 'busy' as const
      let from = state.rolledUntil?.getTime()
      if (from === undefined) {
        const earliest = await findEarliestRecordTime(trx)
        from = earliest === null ? target : Math.min(floorToDay(earliest.getTime()), target)
        if (from === target) await setRolledUntil(trx, until, options.now())
      }
      progress.rolledUntil = new Date(from)
      if (from >= target) return 'done' as const
      let to = Math.min(target, floorToDay(from) + DAY_MS, from + spanMs)
      const rows = await addRecordsToRollups(trx, new Date(from), new Date(to))
      // Nothing in that span: skip the days without records (a quiet installation, or a gap in the history).
      if (rows === 0 && to < target) {
        const next = await findNextRecordTime(trx, new Date(to))
        to = next === null ? target : Math.max(to, Math.min(floorToDay(next.getTime()), target))
      }
      await setRolledUntil(trx, new Date(to), options.now())
      // Counted once committed: a span cancelled by the timeout added nothing.
      progress.rows += rows
      progress.rolledUntil = new Date(to)
      progress.chunks++
      progress.spanMs = Math.min(DAY_MS, spanMs * 2)
      return to >= target ? ('done' as const) : ('more' as const)
    })
  }
}

/** Rolls up what has closed: up to the clock minus the delay. */
export const rollUpClosedTime = (
  deps: RollupDeps,
  options: { budgetMs?: number; skipLocked: boolean; spanMs?: number },
): Promise<RollupProgress> => rollUpTo(deps.db, new Date(deps.clock().getTime() - deps.delayMs), { now: deps.clock, ...options })

/** Forgets every rollup (one transaction: summaries read the records meanwhile, exactly), e.g. before a rebuild. */
export async function resetRollups(db: Kysely<Database>, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockRollupState(trx, { skipLocked: false })
    await deleteRollups(trx)
    await setRolledUntil(trx, null, now)
  })
}

/** The operator's rebuild (CLI): every rollup again from the records, up to the closed time. */
export async function rebuildRollups(deps: RollupDeps): Promise<RollupProgress & { seconds: number }> {
  const started = performance.now()
  await resetRollups(deps.db, deps.clock())
  const progress = await rollUpClosedTime(deps, { skipLocked: false })
  return { ...progress, seconds: Math.round((performance.now() - started) / 100) / 10 }
}

/** Where the rollups stand (CLI): up to when they are complete, how far behind the clock that is, rows by grain. */
export async function rollupStatus(deps: Pick<RollupDeps, 'db' | 'clock'>) {
  const rolledUntil = await findRolledUntil(deps.db)
  return {
    rolledUntil: rolledUntil?.toISOString() ?? null,
    lagSeconds: rolledUntil === null ? null : Math.round((deps.clock().getTime() - rolledUntil.getTime()) / 1000),
    rows: await countRollupRows(deps.db),
  }
}

/**
 * The operator's check (CLI): every UTC day before rolled_until whose rows differ from its records now. Empty unless a
 * record was committed later than SUMMARY_ROLLUP_DELAY_SECONDS after its time (or the rows were changed by hand); a
 * rebuild repairs it.
 */
export async function verifyRollups(db: Kysely<Database>): Promise<{ rolledUntil: string | null; mismatches: RollupMismatch[] }> {
  const rolledUntil = await findRolledUntil(db)
  return { rolledUntil: rolledUntil?.toISOString() ?? null, mismatches: rolledUntil === null ? [] : await findRollupMismatches(db) }
}

export interface RollupWorkerOptions extends RollupDeps {
  intervalMs: number
  log: FastifyBaseLogger
  metrics: Metrics
}

/** Time one tick may spend catching up before it lets the next tick (soon after) go on. */
const TICK_BUDGET_MS = 2000
const CATCH_UP_PAUSE_MS = 50

/**
 * Rolls up closed time every `intervalMs` in this process (started with the app unless SUMMARY_ROLLUP_WORKER=false),
 * catching up a day per transaction after an upgrade or a rebuild. A failure is logged and counted, and tried again
 * at the next tick (later each time, up to ten intervals); summaries stay exact meanwhile, only slower.
 */
export class RollupWorker {
  private readonly periodic: PeriodicRun
  private failures = 0
  /** The span the next tick starts with (rollUpTo's `spanMs`): a day until a statement timeout says otherwise. */
  private spanMs: number = DAY_MS

  constructor(private readonly options: RollupWorkerOptions) {
    this.periodic = new PeriodicRun(() => this.tick())
  }

  start(): void {
    this.periodic.start()
  }

  /**
   * Stops ticking and waits a moment for a transaction in progress. Not longer: on a frozen link it would hold
   * shutdown for the whole query bound, and a roll-up cut short by the pool closing rolls back and is redone later.
   */
  stop(): Promise<void> {
    return this.periodic.stop()
  }

  /** Rolls up everything closed now (tests and operators); the same work as the ticks, without a budget. */
  runOnce(): Promise<RollupProgress> {
    return rollUpClosedTime(this.options, { skipLocked: true })
  }

  /** One tick's roll-up within its budget; the delay before the next. */
  private async tick(): Promise<number> {
    const { intervalMs, log, metrics } = this.options
    try {
      const progress = await rollUpClosedTime(this.options, { budgetMs: TICK_BUDGET_MS, skipLocked: true, spanMs: this.spanMs })
      if (progress.spanMs < this.spanMs) {
        log.warn(
          { spanSeconds: progress.spanMs / 1000, rolledUntil: progress.rolledUntil },
          'summary roll-up: a span outlasted the statement timeout; rolling up shorter spans',
        )
      }
      this.spanMs = progress.spanMs
      this.failures = 0
      return progress.caughtUp || progress.busy ? intervalMs : CATCH_UP_PAUSE_MS
    } catch (error) {
      if (this.periodic.stopped) {
        log.warn({ err: error }, 'summary roll-up cut short by shutdown; it is redone at the next start')
        return intervalMs
      }
      this.failures++
      metrics.summaryRollupFailed()
      log.error(
        { err: error, failures: this.failures },
        'summary rollups could not be brought up to date; summaries read the records meanwhile',
      )
      return intervalMs * Math.min(this.failures, 10)
    }
  }
}
