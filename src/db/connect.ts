// Opens the database: Postgres through a pg pool when a URL is given, otherwise embedded PGlite.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'

export type DatabaseBackend = 'postgres' | 'pglite'

export interface DatabaseHandle {
  readonly db: Kysely<Database>
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
  connectTimeoutMs?: number
  statementTimeoutMs?: number
  /** Bounds every lock wait; the only waits in this service are concurrent duplicates of one Idempotency-Key. */
  lockTimeoutMs?: number
  applicationName?: string
}

export function openPostgres(options: PostgresOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    statement_timeout: options.statementTimeoutMs ?? 10000,
    lock_timeout: options.lockTimeoutMs ?? 5000,
    application_name: options.applicationName ?? 'canopy',
  })
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  let closed = false
  const max = options.poolMax ?? 10
  return {
    db,
    backend: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    async close() {
      if (closed) return
      closed = true
      // A handler whose client has gone away may still be between queries: let the pool fall quiet first.
      await waitForQuietPool(pool, 5_000)
      await db.destroy()
    },
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

/** The database the configuration asks for: Postgres when DATABASE_URL is set, else PGlite under DATA_DIR. */
export async function openConfiguredDatabase(config: {
  DATABASE_URL?: string | undefined
  DATA_DIR: string
  DATABASE_POOL_MAX: number
  DATABASE_CONNECT_TIMEOUT_MS: number
  DATABASE_STATEMENT_TIMEOUT_MS: number
  IDEMPOTENCY_LOCK_TIMEOUT_MS: number
}): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) {
    return openPostgres({
      url: config.DATABASE_URL,
      poolMax: config.DATABASE_POOL_MAX,
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: config.IDEMPOTENCY_LOCK_TIMEOUT_MS,
    })
  }
  return openPglite({ dataDir: embeddedDataDir(config.DATA_DIR) })
}
