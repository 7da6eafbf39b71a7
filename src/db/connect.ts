// Opens the database: Postgres through a pg pool when a URL is given, otherwise embedded PGlite.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import {
  Kysely,
  PostgresDialect,
  sql,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'
import { isTransientConnectError } from './failures.js'
import { preparedName } from './prepared.js'
import { ReadRouter } from './replica.js'
import { probeReplica } from './repositories/replication.js'

// What a database failure is (a lost connection vs a bug) lives in failures.ts; re-exported for existing importers.
export {
  CONNECTION_ERROR_CODES,
  errorCode,
  isConnectionFailure,
  isDatabaseUnavailable,
  isPoolTimeout,
  isTransientConnectError,
} from './failures.js'

export type DatabaseBackend = 'postgres' | 'pglite'

export interface DatabaseHandle {
  readonly db: Kysely<Database>
  /**
   * The executor of read-only statements that may be served by a read replica (DATABASE_REPLICA_URL): the replica
   * while it answers and is caught up, the primary otherwise (src/db/replica.ts). `db` itself when no replica is
   * configured. Never for writes, transactions, idempotency or authentication, nor for a read that must see what the
   * caller has just written.
   */
  readonly reads: Kysely<Database>
  /** Postgres with DATABASE_REPLICA_URL only: where reads go and why, and the replica's health checks. */
  readonly replica?: ReadRouter
  readonly backend: DatabaseBackend
  close(): Promise<void>
  /** PGlite only: the whole data directory as a gzipped tarball (used to clone test databases). */
  dump?(): Promise<Blob>
  /** Postgres only: the pool's connections and waiting queries, for metrics. */
  poolStats?(): { total: number; idle: number; waiting: number; max: number }
}

export interface PostgresOptions {
  url: string
  poolMax?: number
  /** Bounds both the wait for a pooled connection and the opening of a new one (TCP, TLS, start-up). */
  connectTimeoutMs?: number
  /**
   * Client-side bound on every statement, from sending it to its answer. It also covers a link that
   * stops answering (no reply ever comes), which the server-side statement_timeout cannot. 0: none (migrations only).
   */
  queryTimeoutMs?: number
  /** Postgres statement_timeout: keep it below queryTimeoutMs, so that a slow statement is cancelled by the server first. */
  statementTimeoutMs?: number
  /** Bounds every lock wait; the only waits in this service are concurrent duplicates of one Idempotency-Key. */
  lockTimeoutMs?: number
  applicationName?: string
}

/** The bounds openPostgres uses when not given (the configuration's defaults, src/config.ts). */
export const POSTGRES_BOUNDS = Object.freeze({
  connectTimeoutMs: 2000,
  queryTimeoutMs: 4000,
  statementTimeoutMs: 3000,
  lockTimeoutMs: 2000,
})

/**
 * A statement got no answer within the client-side bound. Its connection is destroyed, never
 * returned to the pool: whatever it was doing is unknown, and the next statement would queue behind
 * it. Its code is the one of a socket timeout, so it answers 503 SERVICE_UNAVAILABLE with
 * Retry-After like every other lost connection (DATABASE_UNAVAILABLE in src/http/errors.ts).
 */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT'
  constructor(readonly timeoutMs: number) {
    super(`the database did not answer within ${timeoutMs} ms`)
    this.name = 'DatabaseTimeoutError'
  }
}

/**
 * Every statement of a pooled client is bounded by `timeoutMs`. A client whose statement timed out
 * refuses further statements (a transaction's ROLLBACK fails at once instead of queueing behind the
 * stuck statement) and, when Kysely releases it, is destroyed and removed from the pool.
 */
function boundedClient(client: pg.PoolClient, timeoutMs: number): PostgresPoolClient {
  let timedOut: DatabaseTimeoutError | undefined
  function query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>
  function query<R>(sql: string | PostgresCursor<R>, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Cursors (streaming) are not configured in this service.
    if (typeof sql !== 'string') throw new TypeError('cursors are not supported')
    if (timedOut) return Promise.reject(timedOut)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_, reject) => {
      if (timeoutMs <= 0) return
      timer = setTimeout(() => {
        timedOut = new DatabaseTimeoutError(timeoutMs)
        reject(timedOut)
      }, timeoutMs)
    })
    // The race also handles a late rejection of the abandoned statement (its connection is destroyed).
    const name = preparedName(sql)
    const answered = (name === undefined
      ? client.query(sql, parameters as unknown[])
      : client.query({ name, text: sql, values: parameters as unknown[] })) as unknown as Promise<PostgresQueryResult<R>>
    // 0: unbounded (migrations only, see openMigrationDatabase).
    if (timeoutMs <= 0) return answered
    return Promise.race([answered, expired]).finally(() => clearTimeout(timer))
  }
  return {
    query,
    release() {
      if (timedOut === undefined) return client.release()
      // Destroyed before it is released, so that no waiting request is handed this connection.
      client.connection.stream.destroy()
      client.release(timedOut)
    },
  }
}

/** The pool Kysely sees: pg's, with every statement bounded (boundedClient). */
function boundedPool(pool: pg.Pool, queryTimeoutMs: number): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  return {
    async connect() {
      const client = await pool.connect()
      let wrapper = wrappers.get(client)
      if (wrapper === undefined) {
        wrapper = boundedClient(client, queryTimeoutMs)
        wrappers.set(client, wrapper)
      }
      return wrapper
    },
    end: () => pool.end(),
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/** One bounded pg pool: what Kysely sees, its counts, and a close that never hangs on a frozen link. */
interface BoundedPostgresPool {
  readonly pool: PostgresPool
  stats(): { total: number; idle: number; waiting: number; max: number }
  /** Lets the pool fall quiet, then ends its connections (bounded: a frozen link never says goodbye). */
  close(end: () => Promise<void>): Promise<void>
}

function openBoundedPool(options: PostgresOptions): BoundedPostgresPool {
  const queryTimeoutMs = options.queryTimeoutMs ?? POSTGRES_BOUNDS.queryTimeoutMs
  const max = options.poolMax ?? 10
  const pool = new pg.Pool({
    connectionString: options.url,
    max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? POSTGRES_BOUNDS.connectTimeoutMs,
    // pg sends no statement_timeout of 0 (falsy): "none" is asked for explicitly, over a server or role default.
    ...(options.statementTimeoutMs === 0
      ? { options: '-c statement_timeout=0' }
      : { statement_timeout: options.statementTimeoutMs ?? POSTGRES_BOUNDS.statementTimeoutMs }),
    lock_timeout: options.lockTimeoutMs ?? POSTGRES_BOUNDS.lockTimeoutMs,
    application_name: options.applicationName ?? 'canopy',
    // Lets the kernel notice a peer that has gone away on an idle connection; the bounds above do the rest.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  })
  const clients = new Set<pg.PoolClient>()
  /** Clients checked out of the pool (a statement or transaction in progress). */
  const busy = new Set<pg.PoolClient>()
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    clients.add(client)
    // Nor may a checked-out one (pg emits 'error' on the client; its statement fails on its own).
    client.on('error', () => {})
  })
  pool.on('acquire', (client) => busy.add(client))
  pool.on('release', (_error, client) => busy.delete(client))
  pool.on('remove', (client) => {
    clients.delete(client)
    busy.delete(client)
  })
  return {
    pool: boundedPool(pool, queryTimeoutMs),
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    async close(end) {
      // A handler whose client has gone away may still be between queries: let the pool fall quiet first.
      // Briefly: on a frozen link a background query in flight would hold shutdown for its whole bound, and
      // every worker's work is transactional (cut short, it rolls back and is done again after the restart).
      await waitForQuietPool(pool, 1_000)
      // Still checked out after that: a statement unanswered at shutdown, most likely on a link that no longer answers,
      // where ending a connection gracefully (the server's goodbye) would wait in vain too. Every connection is closed
      // at once, and that statement fails (a long read cut short by the shutdown fails the same way).
      if (busy.size > 0) for (const client of clients) client.connection.stream.destroy()
      // Ending a connection waits for the server's goodbye, which a frozen link never sends: bounded.
      const ended = end().then(() => true)
      if (!(await Promise.race([ended, sleep(1_000).then(() => false)]))) {
        for (const client of clients) client.connection.stream.destroy()
        await Promise.race([ended, sleep(500)])
      }
    },
  }
}

/** Where reads may go besides the primary (DATABASE_REPLICA_URL), and how stale they may be. */
export interface ReplicaOptions {
  url: string
  /** Replay lag above which the replica is skipped (DATABASE_REPLICA_MAX_LAG_MS). */
  maxLagMs: number
  /** How often its health and lag are checked (DATABASE_REPLICA_CHECK_INTERVAL_MS). */
  checkIntervalMs: number
}

export function openPostgres(options: PostgresOptions & { replica?: ReplicaOptions | undefined }): DatabaseHandle {
  const primary = openBoundedPool(options)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: primary.pool }) })
  let closed = false
  let replica: { pool: BoundedPostgresPool; db: Kysely<Database>; router: ReadRouter; reads: Kysely<Database> } | undefined
  if (options.replica) {
    // Same bounds as the primary; its own application_name, so that its sessions are told apart on the server.
    const pool = openBoundedPool({ ...options, url: options.replica.url, applicationName: 'canopy-reads' })
    const replicaDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pool.pool }) })
    const router = new ReadRouter({ primary: primary.pool, replica: pool.pool, probe: () => probeReplica(replicaDb), ...options.replica })
    const reads = new Kysely<Database>({ dialect: new PostgresDialect({ pool: router.pool }) })
    replica = { pool, db: replicaDb, router, reads }
  }
  return {
    db,
    reads: replica?.reads ?? db,
    ...(replica ? { replica: replica.router } : {}),
    backend: 'postgres',
    poolStats: primary.stats,
    async close() {
      if (closed) return
      closed = true
      if (replica) {
        const { router, reads, pool, db: replicaDb } = replica
        await router.stop()
        // The routing pool owns no connection: ending it ends nothing; each real pool is closed on its own.
        await reads.destroy()
        await pool.close(() => replicaDb.destroy())
      }
      await primary.close(() => db.destroy())
    },
  }
}

export class DatabaseUnreachableError extends Error {
  constructor(
    readonly waitedMs: number,
    readonly attempts: number,
    readonly lastError: unknown,
  ) {
    super(
      `the database is still unreachable after ${attempts} attempt${attempts === 1 ? '' : 's'} in ${waitedMs} ms (DATABASE_STARTUP_TIMEOUT_MS)`,
      {
        cause: lastError,
      },
    )
    this.name = 'DatabaseUnreachableError'
  }
}

export interface StartupRetry {
  attempt: number
  error: unknown
  /** Wait before the next attempt. */
  delayMs: number
  /** What is left of the budget. */
  remainingMs: number
}

/**
 * Start-up: waits until the database answers `SELECT 1`, retrying transient failures with
 * exponential backoff (250 ms, 500 ms, 1 s … at most 5 s apart) for up to `budgetMs` (0: one
 * attempt). Each attempt is itself bounded by the pool's connect and statement bounds. Throws
 * DatabaseUnreachableError when the budget is spent, and at once for a failure that waiting
 * cannot fix. Resolves with the number of attempts.
 */
export async function waitForDatabase(
  handle: DatabaseHandle,
  options: { budgetMs: number; onRetry?: (retry: StartupRetry) => void; now?: () => number },
): Promise<number> {
  const now = options.now ?? Date.now
  const started = now()
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`SELECT 1`.execute(handle.db)
      return attempt
    } catch (error) {
      if (!isTransientConnectError(error)) throw error
      const waited = now() - started
      const remainingMs = options.budgetMs - waited
      if (remainingMs <= 0) throw new DatabaseUnreachableError(waited, attempt, error)
      const delayMs = Math.min(remainingMs, 250 * 2 ** Math.min(attempt - 1, 5), 5_000)
      options.onRetry?.({ attempt, error, delayMs, remainingMs })
      await new Promise((resolve) => setTimeout(resolve, delayMs))
    }
  }
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database in ${dataDir} is in use by process ${pid}; ` +
        'stop that process first (PGlite allows one process per data directory), or run on Postgres with DATABASE_URL',
    )
    this.name = 'DataDirLockedError'
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** One process per PGlite data directory: a pid lock file, taken over when its owner is gone. */
function lockDataDir(dataDir: string): () => void {
  const lockPath = join(dataDir, 'canopy.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => rmSync(lockPath, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = Number(readFileSync(lockPath, 'utf8').trim())
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) throw new DataDirLockedError(dataDir, owner)
      rmSync(lockPath, { force: true })
    }
  }
  throw new Error(`could not lock ${lockPath}`)
}

async function waitForQuietPool(pool: pg.Pool, timeoutMs: number): Promise<void> {
  const quiet = () => pool.waitingCount === 0 && pool.idleCount === pool.totalCount
  const deadline = Date.now() + timeoutMs
  let quietChecks = 0
  while (quietChecks < 2 && Date.now() < deadline) {
    quietChecks = quiet() ? quietChecks + 1 : 0
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Embedded Postgres (PGlite). `dataDir` undefined = in memory; `loadDataDir` seeds it from a dump. */
export async function openPglite(options: { dataDir?: string; loadDataDir?: Blob } = {}): Promise<DatabaseHandle> {
  let unlock = (): void => {}
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true })
    unlock = lockDataDir(options.dataDir)
  }
  let db: Kysely<Database>
  let client: PGlite
  try {
    // Loaded only for the embedded database, so a Postgres deployment does not carry PGlite in memory.
    const [{ PGlite }, { PGliteDialect }] = await Promise.all([import('@electric-sql/pglite'), import('kysely-pglite-dialect')])
    client = await PGlite.create({
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    })
    db = new Kysely<Database>({ dialect: new PGliteDialect(client) })
  } catch (error) {
    unlock()
    throw error
  }
  let closed = false
  return {
    db,
    reads: db,
    backend: 'pglite',
    dump: () => client.dumpDataDir('gzip'),
    async close() {
      if (closed) return
      closed = true
      try {
        await db.destroy()
      } finally {
        unlock()
      }
    },
  }
}

export function embeddedDataDir(dataDir: string): string {
  return join(dataDir, 'pglite')
}

/**
 * Where migrations run on Postgres (`npm run db:migrate`, MIGRATE_ON_START): one connection without the API's
 * statement bounds, since converting a large table takes as long as it takes (the partitioning of a 1,000,000-record
 * ledger ran past the 3 s statement_timeout and was rolled back). Lock waits stay bounded, by the API's statement
 * timeout: while a migration waits for a table's lock the API's statements queue behind it, and they would fail at
 * that bound anyway. A migration that cannot get its locks in time is rolled back whole and can simply be run again.
 */
export function openMigrationDatabase(config: {
  DATABASE_URL: string
  DATABASE_CONNECT_TIMEOUT_MS: number
  DATABASE_STATEMENT_TIMEOUT_MS: number
}): DatabaseHandle {
  return openPostgres({
    url: config.DATABASE_URL,
    poolMax: 1,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    queryTimeoutMs: 0,
    statementTimeoutMs: 0,
    lockTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    applicationName: 'canopy-migrate',
  })
}

/** The database the configuration asks for: Postgres when DATABASE_URL is set, else PGlite under DATA_DIR. */
export async function openConfiguredDatabase(config: {
  DATABASE_URL?: string | undefined
  DATABASE_REPLICA_URL?: string | undefined
  DATABASE_REPLICA_MAX_LAG_MS: number
  DATABASE_REPLICA_CHECK_INTERVAL_MS: number
  DATA_DIR: string
  DATABASE_POOL_MAX: number
  DATABASE_CONNECT_TIMEOUT_MS: number
  DATABASE_QUERY_TIMEOUT_MS: number
  DATABASE_STATEMENT_TIMEOUT_MS: number
  IDEMPOTENCY_LOCK_TIMEOUT_MS: number
}): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) {
    return openPostgres({
      url: config.DATABASE_URL,
      poolMax: config.DATABASE_POOL_MAX,
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: config.IDEMPOTENCY_LOCK_TIMEOUT_MS,
      replica: config.DATABASE_REPLICA_URL
        ? {
            url: config.DATABASE_REPLICA_URL,
            maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
            checkIntervalMs: config.DATABASE_REPLICA_CHECK_INTERVAL_MS,
          }
        : undefined,
    })
  }
  return openPglite({ dataDir: embeddedDataDir(config.DATA_DIR) })
}
