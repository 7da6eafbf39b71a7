// The database side of each measurement window (docs/benchmarks.md, "Database side"):
//
// - transactions, rows and buffers per request from pg_stat_database / pg_stat_user_tables deltas of the
//   window's own database (the baseline and every scenario group have a database of their own);
// - bytes stored per request from the growth of pg_total_relation_size of every table;
// - WAL bytes per request from the WAL insert position, attributed to the window's database (and split by
//   relation, with the full-page-image share) by reading the window's WAL with pg_walinspect; a temporary
//   replication slot keeps that WAL from being recycled until it is read (WalSlot);
// - time in the database per transaction, wait events and the statements seen, from pg_stat_activity
//   sampled during the window.
//
// Postgres 15 backends publish their statistics counters at most once a second while busy, and within
// 10 s of going idle. A counter read is therefore only complete once the database has had no traffic
// for a little over 10 s: every snapshot below first waits for that (STATS_SETTLE_MS). The harness
// alternates between the baseline's database and a group's database, so that wait mostly overlaps the
// other side's run. Snapshots are read on a fresh connection, whose own session and query show up in
// the next window and are subtracted.
import type { Kysely } from 'kysely'
import pg from 'pg'
import { openPostgres } from '../../src/db/connect.js'
import type { Database } from '../../src/db/database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { statementShape } from './statements.js'

export const STATS_SETTLE_MS = 11_000
/** application_name of the harness's own connections, left out of the activity samples. */
const MONITOR_APP = 'canopy-bench-monitor'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const databaseUrl = (adminUrl: string, name: string): string => {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Migrates a scratch database to the latest schema and fills it with a group's seed, on a connection it closes. */
export async function migrateAndSeed(url: string, seed: (db: Kysely<Database>) => Promise<void>): Promise<void> {
  const handle = openPostgres({ url, poolMax: 2 })
  try {
    await migrateToLatest(handle.db)
    await seed(handle.db)
  } finally {
    await handle.close()
  }
}

export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: MONITOR_APP })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

export interface ServerSettings {
  version: string
  [setting: string]: string
}

const REPORTED_SETTINGS = [
  'fsync',
  'synchronous_commit',
  'full_page_writes',
  'wal_compression',
  'shared_buffers',
  'checkpoint_timeout',
  'max_wal_size',
  'autovacuum',
  'track_activity_query_size',
]

// --- Activity sampling -------------------------------------------------------------------------------

interface ShapeAccumulator {
  label: string
  activeSamples: number
  durationsMs: number[]
  rowsSeen: number
  rowsSamples: number
  truncated: boolean
}

export interface StatementSummary {
  statement: string
  /** Share of the samples in which one of the database's backends was busy running this statement. */
  shareOfBusy: number
  /** Server time of completed statements (query_start → state_change of idle backends), ms. */
  completedSampled: number
  p50Ms: number | null
  p95Ms: number | null
  meanMs: number | null
  /** Mean tuples per parameter list, where the text shows one (≥ when Postgres cut the text). */
  meanRows: number | null
  rowsLowerBound: boolean
}

export interface ActivitySummary {
  samples: number
  /** Mean number of the database's client backends that were active or idle in a transaction. */
  busyBackends: number
  /** Mean number of connections open to the database. */
  openBackends: number
  idleInTransactionBackends: number
  /** Share of the busy backend samples by wait event (`CPU` = active without a wait event). */
  waits: { event: string; share: number }[]
  statements: StatementSummary[]
}

const quantile = (sorted: number[], q: number): number | null =>
  sorted.length === 0 ? null : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number)

class ActivitySampler {
  private stopped = false
  private readonly loop: Promise<void>
  private samples = 0
  private busy = 0
  private open = 0
  private idleInTransaction = 0
  private readonly waits = new Map<string, number>()
  private readonly shapes = new Map<string, ShapeAccumulator>()
  private readonly seen = new Set<string>()

  constructor(
    private readonly client: pg.Client,
    private readonly database: string,
    private readonly intervalMs: number,
    private readonly querySize: number,
  ) {
    this.loop = this.run()
  }

  private shape(text: string): { acc: ShapeAccumulator; rows: number | undefined; truncated: boolean } {
    const shape = statementShape(text, this.querySize)
    let acc = this.shapes.get(shape.key)
    if (!acc) {
      acc = { label: shape.label, activeSamples: 0, durationsMs: [], rowsSeen: 0, rowsSamples: 0, truncated: false }
      this.shapes.set(shape.key, acc)
    } else if (!shape.truncated && acc.label.endsWith(' …')) acc.label = shape.label
    return { acc, rows: shape.rows, truncated: shape.truncated }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now()
      const { rows } = await this.client.query<{
        pid: number
        state: string | null
        wait: string | null
        query: string | null
        last_ms: number | null
        query_start: string | null
      }>(
        `SELECT pid, state, CASE WHEN wait_event IS NOT NULL THEN wait_event_type || ':' || wait_event END AS wait, query,
           CASE WHEN state = 'idle' THEN extract(epoch FROM state_change - query_start) * 1000 END::float8 AS last_ms,
           query_start::text
         FROM pg_stat_activity
         WHERE datname = $1 AND backend_type = 'client backend' AND application_name <> $2`,
        [this.database, MONITOR_APP],
      )
      this.samples++
      for (const row of rows) {
        this.open++
        if (!row.state || !row.query) continue
        if (row.state === 'active' || row.state.startsWith('idle in transaction')) {
          this.busy++
          if (row.state !== 'active') this.idleInTransaction++
          const wait = row.state === 'active' ? (row.wait ?? 'CPU') : 'idle in transaction'
          this.waits.set(wait, (this.waits.get(wait) ?? 0) + 1)
          this.shape(row.query).acc.activeSamples++
        } else if (row.state === 'idle' && row.last_ms !== null && row.query_start) {
          // The backend's last statement, complete: counted once however many samples see it.
          const id = `${row.pid}|${row.query_start}`
          if (this.seen.has(id)) continue
          this.seen.add(id)
          const { acc, rows: tuples, truncated } = this.shape(row.query)
          acc.durationsMs.push(row.last_ms)
          if (tuples !== undefined) {
            acc.rowsSeen += tuples
            acc.rowsSamples++
            acc.truncated ||= truncated
          }
        }
      }
      await sleep(Math.max(0, this.intervalMs - (Date.now() - started)))
    }
  }

  async stop(): Promise<ActivitySummary> {
    this.stopped = true
    await this.loop
    const n = Math.max(1, this.samples)
    const busySamples = [...this.waits.values()].reduce((a, b) => a + b, 0)
    const statements = [...this.shapes.values()]
      .map((acc): StatementSummary => {
        const sorted = [...acc.durationsMs].sort((a, b) => a - b)
        return {
          statement: acc.label,
          shareOfBusy: busySamples ? acc.activeSamples / busySamples : 0,
          completedSampled: sorted.length,
          p50Ms: quantile(sorted, 0.5),
          p95Ms: quantile(sorted, 0.95),
          meanMs: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null,
          meanRows: acc.rowsSamples ? acc.rowsSeen / acc.rowsSamples : null,
          rowsLowerBound: acc.truncated,
        }
      })
      .sort((a, b) => b.shareOfBusy - a.shareOfBusy || b.completedSampled - a.completedSampled)
    return {
      samples: this.samples,
      busyBackends: this.busy / n,
      openBackends: this.open / n,
      idleInTransactionBackends: this.idleInTransaction / n,
      waits: [...this.waits]
        .map(([event, count]) => ({ event, share: busySamples ? count / busySamples : 0 }))
        .sort((a, b) => b.share - a.share),
      statements,
    }
  }
}

// --- Snapshots and windows ---------------------------------------------------------------------------

interface Snapshot {
  transactions: number
  sessions: number
  rollbacks: number
  buffers: number
  blocksRead: number
  tables: Map<string, { inserted: number; updated: number; deleted: number; bytes: number }>
}

interface WalRelation {
  /** relfilenode, or the resource manager for records without a block of this database (commit records). */
  node: string
  records: number
  bytes: number
  fpiBytes: number
}

export interface DatabaseWindow {
  database: string
  /** HTTP requests sent during the window (warm-up and measurement). */
  requests: number
  seconds: number
  /** Transactions the server process under test committed or rolled back (autocommit statement = 1). */
  transactions: number
  transactionsPerRequest: number
  rollbacks: number
  rowsInsertedPerRequest: number
  rowsUpdatedPerRequest: number
  rowsDeletedPerRequest: number
  /** Growth of pg_total_relation_size (heap, indexes, TOAST) of all tables, per request. */
  storedBytesPerRequest: number
  /** Shared-buffer page accesses (hits + reads) per request. */
  buffersPerRequest: number
  blocksReadPerRequest: number
  wal: {
    /** WAL record bytes of this database per request (pg_walinspect), else the cluster's WAL per request. */
    bytesPerRequest: number
    scope: 'database' | 'cluster'
    /** The whole cluster's WAL (insert position delta, page headers included) per request. */
    clusterBytesPerRequest: number
    fpiShare: number | null
    byRelation: { relation: string; records: number; bytesPerRequest: number; fpiShare: number }[]
    /** Checkpoints completed during the window (they make the next change to each page a full-page image). */
    checkpoints: number
  }
  activity: ActivitySummary & {
    /** Little's law: mean busy backends × seconds ÷ transactions. */
    dbMsPerTransaction: number | null
    dbMsPerRequest: number
  }
  tables: { table: string; rowsInsertedPerRequest: number; storedBytesPerRequest: number }[]
}

export interface PendingWindow {
  /** Filled in once the window is closed by a settled snapshot (before the database's next traffic). */
  result?: DatabaseWindow
  onClose?: (window: DatabaseWindow) => void
}

interface OpenWindow {
  pending: PendingWindow
  before: Snapshot
  startLsn: string
  startCheckpoints: number
  startedAt: number
  sampler: ActivitySampler
}

interface EndedWindow {
  pending: PendingWindow
  before: Snapshot
  requests: number
  seconds: number
  clusterWalBytes: number
  wal: WalRelation[] | null
  checkpoints: number
  activity: ActivitySummary
}

/**
 * A temporary physical replication slot that keeps the WAL of the window being measured on disk until
 * pg_walinspect has read it. It lives on a connection of its own that runs nothing else, because
 * Postgres drops a session's temporary slots whenever that session raises an error; it disappears
 * with that connection, however the harness ends.
 */
class WalSlot {
  private advancedTo = '0/0'

  private constructor(
    private readonly client: pg.Client,
    readonly name: string,
  ) {}

  static async create(url: string, name: string): Promise<WalSlot | undefined> {
    const client = new pg.Client({ connectionString: url, application_name: MONITOR_APP })
    await client.connect()
    try {
      await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [name])
      return new WalSlot(client, name)
    } catch (error) {
      await client.end()
      // Needs superuser or REPLICATION, and a free slot.
      console.warn(`bench: no temporary replication slot (${(error as Error).message}); a checkpoint may hide a window's WAL`)
      return undefined
    }
  }

  /** Releases the WAL before `lsn` (never backwards: Postgres refuses that). */
  async advance(lsn: string): Promise<void> {
    try {
      const { rows } = await this.client.query<{ ahead: boolean }>(
        `SELECT $1::pg_lsn > $2::pg_lsn AS ahead FROM pg_replication_slots WHERE slot_name = $3`,
        [lsn, this.advancedTo, this.name],
      )
      if (rows.length === 0) {
        // Lost (it should not be): take a new one, which holds WAL from now on.
        await this.client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [this.name])
        console.warn('bench: the temporary replication slot was lost and has been recreated')
      } else if (rows[0]?.ahead) {
        await this.client.query('SELECT pg_replication_slot_advance($1, $2::pg_lsn)', [this.name, lsn])
        this.advancedTo = lsn
      }
    } catch (error) {
      console.warn(`bench: replication slot: ${(error as Error).message}`)
    }
  }

  async close(): Promise<void> {
    await this.client.end()
  }
}

export class DatabaseSide {
  private constructor(
    private readonly monitor: pg.Client,
    readonly settings: ServerSettings,
    /** False when pg_walinspect cannot be used: WAL is then the cluster's, not attributed. */
    readonly walinspect: boolean,
    readonly sampleIntervalMs: number,
    private readonly trackActivityQuerySize: number,
    /** Holds the WAL of the current window, if it could be created. */
    private readonly slot: WalSlot | undefined,
  ) {}

  /**
   * Connects to `monitorUrl` (a scratch database of the harness) and installs pg_walinspect there if it
   * can, and takes a temporary replication slot named `slotName` (see WalSlot).
   */
  static async open(monitorUrl: string, sampleIntervalMs: number, slotName: string): Promise<DatabaseSide> {
    const monitor = new pg.Client({ connectionString: monitorUrl, application_name: MONITOR_APP })
    await monitor.connect()
    const settings: ServerSettings = { version: (await monitor.query<{ v: string }>('SELECT version() AS v')).rows[0]?.v ?? '' }
    const { rows } = await monitor.query<{ name: string; setting: string }>(
      `SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name = ANY($1)`,
      [REPORTED_SETTINGS],
    )
    for (const row of rows) settings[row.name] = row.setting
    // In bytes (current_setting shows it with a unit, e.g. 1kB).
    const querySize = await monitor.query<{ bytes: number }>(
      "SELECT setting::int AS bytes FROM pg_settings WHERE name = 'track_activity_query_size'",
    )
    const trackActivityQuerySize = querySize.rows[0]?.bytes ?? 1024
    let walinspect = true
    try {
      await monitor.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect')
    } catch {
      walinspect = false
    }
    // Without it a checkpoint during a window may recycle the window's WAL before it is read (the window
    // then reports the cluster's WAL).
    const slot = walinspect ? await WalSlot.create(monitorUrl, slotName) : undefined
    return new DatabaseSide(monitor, settings, walinspect, sampleIntervalMs, trackActivityQuerySize, slot)
  }

  get walSlot(): boolean {
    return this.slot !== undefined
  }

  async close(): Promise<void> {
    await this.slot?.close()
    await this.monitor.end()
  }

  meter(name: string, url: string): DatabaseMeter {
    return new DatabaseMeter(this, name, url)
  }

  /** @internal */ async lsn(): Promise<string> {
    return (await this.monitor.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]?.lsn ?? '0/0'
  }

  /** @internal */ async checkpoints(): Promise<number> {
    const { rows } = await this.monitor.query<{ n: string }>('SELECT checkpoints_timed + checkpoints_req AS n FROM pg_stat_bgwriter')
    return Number(rows[0]?.n ?? 0)
  }

  /** @internal */ async walBytes(from: string, to: string): Promise<number> {
    const { rows } = await this.monitor.query<{ d: string }>('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::bigint AS d', [from, to])
    return Number(rows[0]?.d ?? 0)
  }

  /** @internal */ async clientBackends(database: string): Promise<number> {
    const { rows } = await this.monitor.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND application_name <> $2`,
      [database, MONITOR_APP],
    )
    return rows[0]?.n ?? 0
  }

  /** @internal */ sampler(database: string): ActivitySampler {
    return new ActivitySampler(this.monitor, database, this.sampleIntervalMs, this.trackActivityQuerySize)
  }

  /**
   * WAL records between two positions that belong to database `oid`: those with a block of one of its
   * relations, and the commit/abort records of the transactions that wrote such a block. Null when the
   * WAL cannot be read (pg_walinspect missing, or the segments already recycled).
   * @internal
   */
  async walOf(oid: number, from: string, to: string): Promise<WalRelation[] | null> {
    if (!this.walinspect) return null
    // No WAL at all was written (pg_walinspect refuses an empty range).
    if (from === to) return []
    try {
      // pg_walinspect reads only WAL that has been flushed.
      for (let i = 0; i < 50; i++) {
        const { rows } = await this.monitor.query<{ ok: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok', [to])
        if (rows[0]?.ok) break
        await sleep(20)
      }
      const { rows } = await this.monitor.query<{ node: string; records: number; bytes: string; fpi: string }>(
        `WITH r AS (
           SELECT xid::text AS xid, resource_manager, record_length, fpi_length,
                  substring(block_ref FROM $3) AS node
           FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
         ours AS (SELECT DISTINCT xid FROM r WHERE node IS NOT NULL AND xid <> '0')
         SELECT coalesce(node, resource_manager) AS node, count(*)::int AS records,
                sum(record_length)::bigint AS bytes, sum(fpi_length)::bigint AS fpi
         FROM r WHERE node IS NOT NULL OR xid IN (SELECT xid FROM ours)
         GROUP BY 1`,
        [from, to, String.raw`rel \d+/${oid}/(\d+)`],
      )
      return rows.map((row) => ({ node: row.node, records: row.records, bytes: Number(row.bytes), fpiBytes: Number(row.fpi) }))
    } catch (error) {
      console.warn(`bench: WAL of ${from}..${to} not readable: ${(error as Error).message}`)
      return null
    } finally {
      // Read (or lost): release it. The slot never holds more than the window being measured.
      await this.slot?.advance(to)
    }
  }
}

/** One database's counters, read only when settled, and the windows measured on it. */
export class DatabaseMeter {
  private lastTrafficAt = 0
  private trafficSinceSnapshot = true
  private lastSnapshot: Snapshot | undefined
  private oid = 0
  private open: OpenWindow | undefined
  private ended: EndedWindow | undefined
  private readonly windows: PendingWindow[] = []

  constructor(
    private readonly side: DatabaseSide,
    readonly name: string,
    private readonly url: string,
  ) {}

  /** Call after any traffic to this database outside a window (seeding, start-up, an unmeasured run). */
  touched(): void {
    this.lastTrafficAt = Date.now()
    this.trafficSinceSnapshot = true
  }

  private async snapshot(): Promise<Snapshot> {
    if (!this.trafficSinceSnapshot && this.lastSnapshot) return this.lastSnapshot
    const wait = this.lastTrafficAt + STATS_SETTLE_MS - Date.now()
    if (wait > 0) await sleep(wait)
    const snapshot = await withClient(this.url, async (client) => {
      const { rows } = await client.query<{
        oid: number
        transactions: string
        rollbacks: string
        sessions: string
        buffers: string
        blocks_read: string
        tables: { table: string; inserted: number; updated: number; deleted: number; bytes: number }[]
      }>(
        `SELECT d.oid::int AS oid, s.xact_commit + s.xact_rollback AS transactions, s.xact_rollback AS rollbacks,
                s.sessions, s.blks_hit + s.blks_read AS buffers, s.blks_read AS blocks_read,
                (SELECT coalesce(json_agg(json_build_object('table', t.relname, 'inserted', t.n_tup_ins, 'updated', t.n_tup_upd,
                                                            'deleted', t.n_tup_del, 'bytes', pg_total_relation_size(t.relid))), '[]')
                 FROM pg_stat_user_tables t) AS tables
         FROM pg_stat_database s JOIN pg_database d ON d.datname = s.datname
         WHERE s.datname = current_database()`,
      )
      const row = rows[0]
      if (!row) throw new Error(`no statistics for database ${this.name}`)
      this.oid = row.oid
      return {
        transactions: Number(row.transactions),
        rollbacks: Number(row.rollbacks),
        sessions: Number(row.sessions),
        buffers: Number(row.buffers),
        blocksRead: Number(row.blocks_read),
        tables: new Map(row.tables.map((t) => [t.table, { inserted: t.inserted, updated: t.updated, deleted: t.deleted, bytes: t.bytes }])),
      }
    })
    this.lastSnapshot = snapshot
    this.trafficSinceSnapshot = false
    if (this.ended) this.close(this.ended, snapshot)
    this.ended = undefined
    return snapshot
  }

  /**
   * The server under test has stopped: once its connections are gone, their backends have published
   * their counters on exit, so the next snapshot needs no settle pause.
   */
  async serverStopped(): Promise<void> {
    for (let i = 0; i < 100 && (await this.side.clientBackends(this.name)) > 0; i++) await sleep(50)
    if ((await this.side.clientBackends(this.name)) === 0) this.lastTrafficAt = 0
  }

  /** Before any traffic: closes the previous window (waiting for settled counters if it has to). */
  async beforeTraffic(): Promise<void> {
    if (this.ended) await this.snapshot()
  }

  /** Starts a window: settled counters, the WAL position, activity sampling. */
  async beginWindow(): Promise<PendingWindow> {
    if (this.open) throw new Error(`a window is already open on ${this.name}`)
    const before = await this.snapshot()
    const pending: PendingWindow = {}
    this.windows.push(pending)
    this.open = {
      pending,
      before,
      startLsn: await this.side.lsn(),
      startCheckpoints: await this.side.checkpoints(),
      startedAt: Date.now(),
      sampler: this.side.sampler(this.name),
    }
    return pending
  }

  /** Ends the window after its traffic; `requests` is what was sent to the server during it. */
  async endWindow(requests: number): Promise<void> {
    const open = this.open
    if (!open) throw new Error(`no window open on ${this.name}`)
    this.open = undefined
    const endLsn = await this.side.lsn()
    const seconds = (Date.now() - open.startedAt) / 1000
    this.touched()
    const activity = await open.sampler.stop()
    const checkpoints = (await this.side.checkpoints()) - open.startCheckpoints
    this.ended = {
      pending: open.pending,
      before: open.before,
      requests,
      seconds,
      clusterWalBytes: await this.side.walBytes(open.startLsn, endLsn),
      wal: await this.side.walOf(this.oid, open.startLsn, endLsn),
      checkpoints,
      activity,
    }
  }

  private close(ended: EndedWindow, after: Snapshot): void {
    const { before, requests } = ended
    const per = (value: number) => (requests > 0 ? value / requests : 0)
    // The snapshot connection that opened the window: one session, and its query (its start-up
    // transaction is one of the sessions' start-up transactions subtracted with the sessions).
    const transactions = after.transactions - before.transactions - (after.sessions - before.sessions) - 1
    let inserted = 0
    let updated = 0
    let deleted = 0
    let bytes = 0
    const tables: DatabaseWindow['tables'] = []
    for (const [table, now] of after.tables) {
      const then = before.tables.get(table) ?? { inserted: 0, updated: 0, deleted: 0, bytes: 0 }
      inserted += now.inserted - then.inserted
      updated += now.updated - then.updated
      deleted += now.deleted - then.deleted
      bytes += now.bytes - then.bytes
      if (now.inserted !== then.inserted || now.bytes !== then.bytes) {
        tables.push({
          table,
          rowsInsertedPerRequest: per(now.inserted - then.inserted),
          storedBytesPerRequest: per(now.bytes - then.bytes),
        })
      }
    }
    tables.sort((a, b) => b.storedBytesPerRequest - a.storedBytesPerRequest)
    const walTotal = ended.wal?.reduce((sum, r) => sum + r.bytes, 0)
    const walFpi = ended.wal?.reduce((sum, r) => sum + r.fpiBytes, 0)
    const busySeconds = ended.activity.busyBackends * ended.seconds
    const result: DatabaseWindow = {
      database: this.name,
      requests,
      seconds: ended.seconds,
      transactions,
      transactionsPerRequest: per(transactions),
      rollbacks: after.rollbacks - before.rollbacks,
      rowsInsertedPerRequest: per(inserted),
      rowsUpdatedPerRequest: per(updated),
      rowsDeletedPerRequest: per(deleted),
      storedBytesPerRequest: per(bytes),
      buffersPerRequest: per(after.buffers - before.buffers),
      blocksReadPerRequest: per(after.blocksRead - before.blocksRead),
      wal: {
        bytesPerRequest: per(walTotal ?? ended.clusterWalBytes),
        scope: ended.wal ? 'database' : 'cluster',
        clusterBytesPerRequest: per(ended.clusterWalBytes),
        fpiShare: walTotal ? (walFpi ?? 0) / walTotal : null,
        byRelation: (ended.wal ?? [])
          .map((r) => ({
            relation: r.node,
            records: r.records,
            bytesPerRequest: per(r.bytes),
            fpiShare: r.bytes ? r.fpiBytes / r.bytes : 0,
          }))
          .sort((a, b) => b.bytesPerRequest - a.bytesPerRequest),
        checkpoints: ended.checkpoints,
      },
      activity: {
        ...ended.activity,
        dbMsPerTransaction: transactions > 0 ? (busySeconds * 1000) / transactions : null,
        dbMsPerRequest: per(busySeconds * 1000),
      },
      tables,
    }
    ended.pending.result = result
    ended.pending.onClose?.(result)
  }

  /** Closes the last window and names the relations in the WAL breakdowns (after all traffic). */
  async finish(): Promise<void> {
    await this.beforeTraffic()
    const names = await withClient(this.url, async (client) => {
      const { rows } = await client.query<{ node: string; name: string }>(
        `SELECT c.relfilenode::text AS node,
                coalesce(owner.relname || ' (toast)', toast_owner.relname || ' (toast index)', c.relname) AS name
         FROM pg_class c
         LEFT JOIN pg_class owner ON owner.reltoastrelid = c.oid
         LEFT JOIN pg_index ix ON ix.indexrelid = c.oid AND c.relnamespace = 'pg_toast'::regnamespace
         LEFT JOIN pg_class toast_owner ON toast_owner.reltoastrelid = ix.indrelid
         WHERE c.relfilenode <> 0`,
      )
      return new Map(rows.map((r) => [r.node, r.name]))
    })
    for (const window of this.windows) {
      for (const relation of window.result?.wal.byRelation ?? []) {
        // Records without a block of this database are its transactions' commit (or abort) records.
        relation.relation =
          names.get(relation.relation) ?? (relation.relation === 'Transaction' ? 'commit records' : `${relation.relation} records`)
      }
    }
  }
}
