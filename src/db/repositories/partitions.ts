// The partitions of the tables partitioned by month (docs/partitioning.md): listing them from the catalogue, creating
// one, and retention's steps — keep a month's allocated quotes, detach the month, drop it. Raw SQL: DDL on names the
// domain builds (src/domain/partitions.ts), never on anything a request sent.
import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'

export interface PartitionRow {
  name: string
  /** The partition bound as Postgres prints it: FOR VALUES FROM (…) TO (…), or DEFAULT. */
  bound: string
  /** The planner's estimate (-1 or 0 before the first ANALYZE). */
  estimatedRows: number
  bytes: number
}

/** The partitions of a table, by name. */
export async function listPartitions(db: Kysely<Database>, table: string): Promise<PartitionRow[]> {
  const { rows } = await sql<{ name: string; bound: string; estimated_rows: number; bytes: string }>`
    SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound, c.reltuples::float8 AS estimated_rows,
           pg_total_relation_size(c.oid)::text AS bytes
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_class p ON p.oid = i.inhparent
    JOIN pg_namespace n ON n.oid = p.relnamespace
    WHERE p.relname = ${table} AND n.nspname = current_schema()
    ORDER BY c.relname`.execute(db)
  return rows.map((r) => ({ name: r.name, bound: r.bound, estimatedRows: Math.max(0, Number(r.estimated_rows)), bytes: Number(r.bytes) }))
}

/**
 * Creates the partition of [from, to) unless it exists. Rows of that range already in the default partition (written
 * while the month had no partition) move into it in the same transaction: the new partition is filled, then attached
 * — unless `move` is false (a table other rows reference by key: the ledger): then the month is not created while the
 * default partition holds rows of it, and `waiting` says how many.
 */
export async function createPartition(
  db: Kysely<Database>,
  table: string,
  key: string,
  name: string,
  range: { from: Date; to: Date },
  move = true,
): Promise<{ moved: number; waiting: number }> {
  const bounds = `FROM ('${range.from.toISOString()}') TO ('${range.to.toISOString()}')`
  const inRange = `${key} >= '${range.from.toISOString()}' AND ${key} < '${range.to.toISOString()}'`
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{
      n: string
    }>`SELECT count(*)::text AS n FROM ${sql.table(`${table}_default`)} WHERE ${sql.raw(inRange)}`.execute(trx)
    const waiting = Number(rows[0]?.n ?? 0)
    if (waiting === 0) {
      await sql.raw(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${table} FOR VALUES ${bounds}`).execute(trx)
      return { moved: 0, waiting: 0 }
    }
    if (!move) return { moved: 0, waiting }
    await sql.raw(`CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`).execute(trx)
    await sql.raw(`INSERT INTO ${name} SELECT * FROM ${table}_default WHERE ${inRange}`).execute(trx)
    await sql.raw(`DELETE FROM ${table}_default WHERE ${inRange}`).execute(trx)
    await sql.raw(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES ${bounds}`).execute(trx)
    return { moved: waiting, waiting: 0 }
  })
}

/**
 * Copies the partition's quotes that an allocation made since `since` names into retained_quotes (once each); how many
 * were new. No index leads with quote_id (it would cost every allocation its bytes, for a monthly job): this reads the
 * allocations' months from `since` on, a scan that holds no lock anything waits for.
 */
export async function retainAllocatedQuotes(db: Kysely<Database>, partition: string, since: Date): Promise<number> {
  const result = await sql`
    INSERT INTO retained_quotes SELECT q.* FROM ${sql.table(partition)} q
    WHERE EXISTS (SELECT 1 FROM allocations a WHERE a.quote_id = q.id AND a.created_at >= ${since.toISOString()}::timestamptz)
    ON CONFLICT (id) DO NOTHING`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/** Tax receipts of the partition still to be sent (or retried): a month with any is kept. */
export async function countPendingReceipts(db: Kysely<Database>, partition: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql.table(partition)} WHERE status = 'pending'`.execute(db)
  return Number(rows[0]?.n ?? 0)
}

/**
 * Detaches a partition (a catalogue change: the table briefly takes an exclusive lock, waited for at most
 * `lockTimeoutMs`).
 */
export async function detachPartition(db: Kysely<Database>, table: string, partition: string, lockTimeoutMs: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql.raw(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`).execute(trx)
    await sql.raw(`ALTER TABLE ${table} DETACH PARTITION ${partition}`).execute(trx)
  })
}

export async function dropDetachedTable(db: Kysely<Database>, name: string): Promise<void> {
  await sql.raw(`DROP TABLE IF EXISTS ${name}`).execute(db)
}

/** Tables left detached by a run cut short between its detach and its drop (named like partitions, no parent). */
export async function findDetachedPartitions(db: Kysely<Database>, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname LIKE ${`${table}\\_p%`}
      AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid)`.execute(db)
  return rows.map((r) => r.name)
}

/** A session-level advisory lock on one connection for `work`, or undefined when another process holds it. */
export async function withMaintenanceLock<T>(
  db: Kysely<Database>,
  key: number,
  work: (conn: Kysely<Database>) => Promise<T>,
): Promise<T | undefined> {
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${key}) AS locked`.execute(conn)
    if (!rows[0]?.locked) return undefined
    try {
      return await work(conn)
    } finally {
      await sql`SELECT pg_advisory_unlock(${key})`.execute(conn)
    }
  })
}
