// What a database failure is: the database or the link to it out of reach (a failover, a restart: retryable, answered
// 503 and logged as a warning), as opposed to a statement that is wrong (a bug: logged as an error).
/**
 * Error codes of a database that is out of reach for now: socket errors, Postgres' connection exceptions
 * (SQLSTATE class 08), too many connections (53300) and a server starting or shutting down (57P0x). Worth
 * waiting for at start-up; a 503 with Retry-After for a request (src/http/errors.ts).
 */
export const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  '57P01',
  '57P02',
  '57P03',
])

/** The code of an error, or of the first of an AggregateError's errors (Node tries each address of a host). */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') return code
  const inner = (error as { errors?: unknown } | null)?.errors
  return Array.isArray(inner) && inner.length > 0 ? errorCode(inner[0]) : undefined
}

/**
 * True when waiting may help (nothing listens yet, a refused or timed-out connection, DNS not
 * there yet, a server starting up); false for what waiting cannot fix (bad credentials, an
 * unknown database, a bug), which start-up reports at once.
 */
export function isTransientConnectError(error: unknown): boolean {
  const code = errorCode(error)
  if (code !== undefined) return CONNECTION_ERROR_CODES.has(code)
  const message = error instanceof Error ? error.message : ''
  return /timeout exceeded when trying to connect|^Connection terminated/.test(message)
}

/** pg's error when no pooled connection could be had (or opened) within DATABASE_CONNECT_TIMEOUT_MS. */
export function isPoolTimeout(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message
  return (
    typeof message === 'string' && /timeout exceeded when trying to connect|Connection terminated due to connection timeout/.test(message)
  )
}

/** pg's errors (no code) for a connection that ended under a statement, or was used after that. */
function isConnectionLost(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message
  return typeof message === 'string' && /^Connection terminated|^Client has encountered a connection error/.test(message)
}

/**
 * The database (or the link to it) failed, rather than the statement: out of reach, refused, gone mid-statement,
 * no answer within the bounds, a server shutting down. What a failover looks like from here: retryable, not a bug.
 */
export function isConnectionFailure(error: unknown): boolean {
  const code = errorCode(error)
  return (code !== undefined && CONNECTION_ERROR_CODES.has(code)) || isPoolTimeout(error) || isConnectionLost(error)
}

/**
 * A statement Postgres rolled back to break a deadlock (40P01), e.g. a write meeting partition maintenance's DDL, which
 * locks a partitioned table and the tables its foreign keys name: run again, it waits for the other side instead.
 */
export const isDeadlockVictim = (error: unknown): boolean => errorCode(error) === '40P01'

/** How many times a single-statement write is run in all when Postgres keeps making it a deadlock's victim. */
export const DEADLOCK_RUNS_MAX = 3

/**
 * Runs a write of one statement (which a deadlock rolls back whole, so nothing of it stays) again when it was a
 * deadlock's victim, at most DEADLOCK_RUNS_MAX times in all; any other failure, or the last one, is thrown. Within a
 * transaction (`inTransaction`) it runs once: a deadlock aborts the whole transaction, which is its owner's to retry.
 */
export async function runAgainOnDeadlock<T>(inTransaction: boolean, run: () => Promise<T>): Promise<T> {
  if (inTransaction) return run()
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if (attempt < DEADLOCK_RUNS_MAX && isDeadlockVictim(error)) continue
      throw error
    }
  }
}

/** A statement cancelled by the server's statement_timeout (57014). */
export const isStatementTimeout = (error: unknown): boolean => errorCode(error) === '57014'

/**
 * A database out of reach (isConnectionFailure), or a statement cancelled by statement_timeout (57014): answered
 * 503 with Retry-After (src/http/errors.ts), logged as a warning by background workers, never as an error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return isConnectionFailure(error) || isStatementTimeout(error)
}
