// Reads on a streaming replica (DATABASE_REPLICA_URL). The `reads` executor (src/db/connect.ts) sends each statement
// to the replica while it answers and is caught up, and to the primary otherwise: a replica that fails, lags, stops
// receiving or was promoted is skipped until a health check finds it well again. Without a replica `reads` is `db`.
import type { Kysely, PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type { Database } from './database.js'
import { errorCode, isConnectionFailure } from './failures.js'
import type { ReplicaProbe } from './repositories/replication.js'

/**
 * Why reads are not going to the replica: it did not answer (a check or a statement failed), its replay lag is above
 * the bound, its WAL receiver is not running (cut off from its primary: how stale it is cannot be told), or it is not
 * a standby at all (promoted, or the URL names a primary: it may have forked from the primary the writes go to).
 */
export type ReplicaSkipReason = 'unavailable' | 'lagging' | 'not-receiving' | 'not-standby'

export type ReplicaHealth = { usable: true; lagMs: number } | { usable: false; reason: ReplicaSkipReason; lagMs: number | null }

/**
 * How far behind a replica is, from what it says about itself. pg_last_xact_replay_timestamp() is the primary's commit
 * time of the last transaction replayed: on an idle primary it stops advancing, so `now - it` alone would call an
 * idle, fully caught-up replica "lagging" (and would, for a moment, the first write after a quiet spell). So: a
 * replica that has replayed everything it received is caught up (lag 0); one with WAL waiting to be replayed is at
 * most as old as its last replayed commit, and at most as old as the last check that found it caught up
 * (`msSinceCaughtUp`: everything committed before then had been replayed) — the smaller of the two bounds.
 */
export function judgeReplica(probe: ReplicaProbe, maxLagMs: number, msSinceCaughtUp: number | null = null): ReplicaHealth {
  if (!probe.inRecovery) return { usable: false, reason: 'not-standby', lagMs: null }
  if (!probe.receiving) return { usable: false, reason: 'not-receiving', lagMs: null }
  if (probe.unreplayedBytes !== null && probe.unreplayedBytes <= 0) return { usable: true, lagMs: 0 }
  const bounds = [probe.replayAgeMs, msSinceCaughtUp].filter((ms): ms is number => ms !== null).map((ms) => Math.max(0, ms))
  const lagMs = bounds.length === 0 ? null : Math.min(...bounds)
  if (lagMs === null || lagMs > maxLagMs) return { usable: false, reason: 'lagging', lagMs }
  return { usable: true, lagMs }
}

export interface ReplicaStatus {
  /** unknown: not checked yet (reads go to the primary until the first check passes). */
  state: 'unknown' | 'in-use' | 'skipped'
  reason: ReplicaSkipReason | null
  /** The replay lag last measured (null when it could not be). */
  lagMs: number | null
  /** What failed, when the reason is `unavailable`. */
  error?: unknown
}

export interface ReplicaChange extends ReplicaStatus {
  previous: ReplicaStatus['state']
}

export interface ReadRouterOptions {
  /** The primary's bounded pool: where reads go while the replica is skipped. */
  primary: PostgresPool
  /** The replica's bounded pool. */
  replica: PostgresPool
  /** What the replica says about itself (probeReplica on it). */
  probe: () => Promise<ReplicaProbe>
  maxLagMs: number
  checkIntervalMs: number
}

/** A statement that opens a transaction: from then on the statements of that connection cannot move to the primary. */
const BEGIN = /^\s*(begin|start\s+transaction)\b/i
/** A standby cancelled the statement because replaying WAL needed what it read ("conflict with recovery"). */
const RECOVERY_CONFLICT = '40001'

/**
 * Where reads go. The replica is used once a health check finds it a standby that receives WAL and is within
 * `maxLagMs`; it is skipped when a check or a statement finds otherwise, and used again when a check finds it well
 * (for a lagging replica: back within half the bound, so that a lag hovering at the bound does not flap). A statement
 * that fails on the replica for want of a connection, outside a transaction, is run again on the primary: reads are
 * safe to repeat, and the caller never sees the replica's failure.
 */
export class ReadRouter {
  private current: ReplicaStatus = { state: 'unknown', reason: null, lagMs: null }
  private readonly listeners: ((change: ReplicaChange) => void)[] = []
  private timer: NodeJS.Timeout | undefined
  private checking: Promise<ReplicaStatus> | undefined
  private running = false
  private stopped = false
  /** When a check last found the replica caught up (performance.now()), an upper bound of its lag since. */
  private caughtUpAt: number | undefined

  /** The pool of the `reads` executor: each connection is the replica's while it is in use, else the primary's. */
  readonly pool: PostgresPool = {
    connect: () => this.connect(),
    // It owns no connection: the primary's and the replica's pools are ended by their owner (src/db/connect.ts).
    end: async () => {},
  }

  constructor(private readonly options: ReadRouterOptions) {}

  status(): ReplicaStatus {
    return { ...this.current }
  }

  /** Called on every change of state or reason (not of lag alone). */
  onChange(listener: (change: ReplicaChange) => void): void {
    this.listeners.push(listener)
  }

  /** Checks now, then every checkIntervalMs until stop(). Resolves after the first check. */
  async start(): Promise<ReplicaStatus> {
    if (this.running) return this.status()
    this.running = true
    this.stopped = false
    const status = await this.check()
    this.schedule()
    return status
  }

  /** No more checks; one in flight is left to end with the pools (src/db/connect.ts closes them) and ignored. */
  async stop(): Promise<void> {
    this.running = false
    this.stopped = true
    clearTimeout(this.timer)
  }

  /** One health check (one at a time): probes the replica and moves it in or out of use. */
  check(): Promise<ReplicaStatus> {
    this.checking ??= this.probe().finally(() => (this.checking = undefined))
    return this.checking
  }

  private schedule(): void {
    if (!this.running) return
    this.timer = setTimeout(() => void this.check().finally(() => this.schedule()), this.options.checkIntervalMs)
    this.timer.unref()
  }

  private async probe(): Promise<ReplicaStatus> {
    let health: ReplicaHealth
    let error: unknown
    try {
      const asked = performance.now()
      const probe = await this.options.probe()
      health = judgeReplica(probe, this.options.maxLagMs, this.caughtUpAt === undefined ? null : asked - this.caughtUpAt)
      if (health.usable && health.lagMs === 0) this.caughtUpAt = asked
      else if (!health.usable && health.reason !== 'lagging') this.caughtUpAt = undefined
    } catch (failure) {
      this.caughtUpAt = undefined
      health = { usable: false, reason: 'unavailable', lagMs: null }
      error = failure
    }
    // Shutting down: the pools are closing under the check, which says nothing about the replica.
    if (this.stopped) return this.status()
    if (health.usable) {
      const recovering = this.current.state === 'skipped' && this.current.reason === 'lagging'
      if (recovering && health.lagMs > this.options.maxLagMs / 2) this.update({ ...this.current, lagMs: health.lagMs })
      else this.update({ state: 'in-use', reason: null, lagMs: health.lagMs })
    } else {
      this.update({ state: 'skipped', reason: health.reason, lagMs: health.lagMs, ...(error === undefined ? {} : { error }) })
    }
    return this.status()
  }

  /** A statement or a connection failed on the replica: skip it now, without waiting for the next check. */
  failed(error: unknown): void {
    if (this.current.state === 'in-use') this.update({ state: 'skipped', reason: 'unavailable', lagMs: null, error })
  }

  primaryConnect(): Promise<PostgresPoolClient> {
    return this.options.primary.connect()
  }

  private update(next: ReplicaStatus): void {
    const previous = this.current
    this.current = next
    if (previous.state === next.state && previous.reason === next.reason) return
    for (const listener of this.listeners) listener({ ...next, previous: previous.state })
  }

  private async connect(): Promise<PostgresPoolClient> {
    if (this.current.state === 'in-use') {
      try {
        return new ReplicaClient(await this.options.replica.connect(), this)
      } catch (error) {
        if (!isConnectionFailure(error)) throw error
        this.failed(error)
      }
    }
    return this.options.primary.connect()
  }
}

/** A replica connection that moves to the primary when a statement outside a transaction cannot be served. */
class ReplicaClient implements PostgresPoolClient {
  private replica: PostgresPoolClient | undefined
  private primary: PostgresPoolClient | undefined
  private inTransaction = false

  constructor(
    replica: PostgresPoolClient,
    private readonly router: ReadRouter,
  ) {
    this.replica = replica
  }

  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>
  query<R>(sql: string | PostgresCursor<R>, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Cursors (streaming) are not configured in this service (src/db/connect.ts).
    if (typeof sql !== 'string') throw new TypeError('cursors are not supported')
    return this.run<R>(sql, parameters ?? [])
  }

  private async run<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    if (this.primary) return this.primary.query<R>(sql, parameters)
    const replica = this.replica!
    if (BEGIN.test(sql)) this.inTransaction = true
    try {
      return await replica.query<R>(sql, parameters)
    } catch (error) {
      const lost = isConnectionFailure(error)
      if (this.inTransaction || !(lost || errorCode(error) === RECOVERY_CONFLICT)) throw error
      if (lost) this.router.failed(error)
      this.replica = undefined
      replica.release()
      this.primary = await this.router.primaryConnect()
      return this.primary.query<R>(sql, parameters)
    }
  }

  release(): void {
    ;(this.primary ?? this.replica)?.release()
  }
}

/**
 * A read by id on `reads`, then on the primary when the replica does not have it: what a client has just written may
 * not have reached the replica yet, and "not found" must never be the replica's lag. (Without a replica, one read.)
 */
export async function findOnReplicaFirst<T>(
  executors: { readonly db: Kysely<Database>; readonly reads: Kysely<Database> },
  find: (db: Kysely<Database>) => Promise<T | undefined>,
): Promise<T | undefined> {
  const found = await find(executors.reads)
  if (found !== undefined || executors.reads === executors.db) return found
  return find(executors.db)
}
