// A Postgres primary and a streaming standby of its own, from the machine's Postgres 15 binaries: initdb and
// `pg_basebackup -R` as the postgres user (`runuser` when the tests run as root), on random loopback ports, in a
// temporary directory that close() removes. For the failover and read-replica tests (Postgres runs only).
import { execFile, execFileSync } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { describe, it } from 'vitest'
import { freePort } from './process.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'

const run = promisify(execFile)
export const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin'
/** The application_name the standby connects with, which synchronous_standby_names names. */
export const STANDBY_NAME = 'standby1'

const asRoot = process.getuid?.() === 0
const userName = (() => {
  try {
    return execFileSync('id', ['-un'], { encoding: 'utf8' }).trim()
  } catch {
    return ''
  }
})()

/** Why a cluster cannot be started here (no binaries, not root or postgres), or undefined when it can. */
export function clusterUnavailable(): string | undefined {
  if (!existsSync(join(PG_BIN, 'initdb'))) return `no Postgres binaries in ${PG_BIN} (TEST_PG_BIN)`
  if (asRoot && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser')) return 'runuser is missing'
  if (!asRoot && userName !== 'postgres') return 'the tests run neither as root nor as postgres'
  return undefined
}

/** Runs one of the Postgres binaries as the postgres user. */
function asPostgres(binary: string, args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  const path = join(PG_BIN, binary)
  // Run from a directory the postgres user may enter (never the repository's).
  const options = { timeout: timeoutMs, cwd: tmpdir() }
  return asRoot ? run('runuser', ['-u', 'postgres', '--', path, ...args], options) : run(path, args, options)
}

export interface PgServer {
  readonly name: 'primary' | 'standby'
  readonly port: number
  readonly dataDir: string
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust authentication on loopback). */
  url(database?: string): string
  /** Runs one statement on a short-lived connection. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[], database?: string): Promise<R[]>
  /** The postmaster's pid while it runs. */
  pid(): number | undefined
  /** The server's log so far (for a failing test's message). */
  log(): string
}

export interface PgCluster {
  readonly primary: PgServer
  readonly standby: PgServer
  /**
   * With `replicationLink`: the network between the standby and the primary (the standby streams through it), to
   * freeze (the standby stops receiving, as when the link between two machines fails).
   */
  readonly replicationLink: TcpProxy | undefined
  /**
   * The primary dies at once: SIGKILL to the postmaster (so that nothing restarts), then to every process it had
   * started. Nothing is flushed, nothing says goodbye to its clients.
   */
  killPrimary(): void
  /** pg_ctl promote, waiting until the standby accepts writes. */
  promoteStandby(): Promise<void>
  stopStandby(mode?: 'fast' | 'immediate'): Promise<void>
  startStandby(): Promise<void>
  /** Waits until the primary sees the standby streaming (and, for a synchronous cluster, as its sync standby). */
  waitForStandby(timeoutMs?: number): Promise<void>
  /** Stops whatever still runs (immediate shutdown, then SIGKILL) and removes the directory. Safe to call twice. */
  close(): Promise<void>
}

const postmasterPid = (dataDir: string): number | undefined => {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) children.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return children
}

function killTree(pid: number): void {
  const children = childrenOf(pid)
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // already gone
  }
  for (const child of children) {
    try {
      process.kill(child, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

/** Every postmaster a cluster of this process started: killed on exit if a test never reached close(). */
const started = new Set<string>()
/** Every cluster of this process, from the moment it is being started (a hook may time out before it returns). */
const clusters = new Set<PgCluster>()

/** Stops and removes every cluster this process started, including one whose start never finished. */
export async function closeClusters(): Promise<void> {
  for (const cluster of [...clusters]) await cluster.close()
}
process.once('exit', () => {
  for (const dataDir of started) {
    const pid = postmasterPid(dataDir)
    if (pid !== undefined) killTree(pid)
  }
})

function server(name: 'primary' | 'standby', root: string, port: number): PgServer {
  const dataDir = join(root, name)
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`
  return {
    name,
    port,
    dataDir,
    url,
    async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], database = 'postgres') {
      const client = new pg.Client({ connectionString: url(database), connectionTimeoutMillis: 5_000 })
      client.on('error', () => {})
      await client.connect()
      try {
        return (await client.query<R>(text, values)).rows
      } finally {
        await client.end().catch(() => {})
      }
    },
    pid: () => postmasterPid(dataDir),
    log: () => {
      try {
        return readFileSync(join(root, `${name}.log`), 'utf8')
      } catch {
        return ''
      }
    },
  }
}

async function pgCtl(target: PgServer, root: string, action: 'start' | 'stop' | 'promote', extra: string[] = []): Promise<void> {
  const args = ['-D', target.dataDir, '-w', '-t', '30', ...extra]
  if (action === 'start') args.push('-l', join(root, `${target.name}.log`))
  await asPostgres('pg_ctl', [...args, action])
}

/**
 * Starts a primary (wal_level replica, listening on 127.0.0.1 only) and a standby cloned from it with
 * `pg_basebackup -R` (streaming, hot standby). `synchronous`: once the standby streams, the primary names it in
 * synchronous_standby_names (synchronous_commit=on), so a commit is acknowledged only once the standby has flushed
 * it. The standby's own synchronous_standby_names stays empty: promoted, it has no standby to wait for.
 */
export async function startCluster(options: {
  synchronous: boolean
  replicationLink?: boolean
  /** Runs on the primary before the standby is cloned from it (schema, fixtures: no replication to wait for). */
  prepare?: (primary: PgServer) => Promise<void>
}): Promise<PgCluster> {
  const root = mkdtempSync(join(tmpdir(), 'canopy-pgcluster-'))
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
    chownSync(root, uid, gid)
  }
  const [primaryPort, standbyPort] = [await freePort(), await freePort()]
  const primary = server('primary', root, primaryPort)
  const standby = server('standby', root, standbyPort)
  const replicationLink = options.replicationLink ? await startTcpProxy({ host: '127.0.0.1', port: primaryPort }) : undefined
  const cluster: PgCluster = {
    primary,
    standby,
    replicationLink,
    killPrimary() {
      const pid = primary.pid()
      if (pid !== undefined) killTree(pid)
    },
    async promoteStandby() {
      await pgCtl(standby, root, 'promote')
    },
    async stopStandby(mode = 'fast') {
      await pgCtl(standby, root, 'stop', ['-m', mode])
    },
    async startStandby() {
      await pgCtl(standby, root, 'start')
    },
    async waitForStandby(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const rows = await primary.query<{ state: string; sync_state: string }>(
          'SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1',
          [STANDBY_NAME],
        )
        const ready = rows.some((r) => r.state === 'streaming' && (!options.synchronous || r.sync_state === 'sync'))
        if (ready) return
        if (Date.now() > deadline) throw new Error(`the standby is not streaming: ${JSON.stringify(rows)}\n${standby.log()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async close() {
      for (const target of [standby, primary]) {
        if (target.pid() === undefined) continue
        await pgCtl(target, root, 'stop', ['-m', 'immediate']).catch(() => {})
        const pid = target.pid()
        if (pid !== undefined) killTree(pid)
      }
      for (const target of [standby, primary]) started.delete(target.dataDir)
      replicationLink?.resume({ deliverOrphans: false })
      await replicationLink?.close()
      rmSync(root, { recursive: true, force: true })
      clusters.delete(cluster)
    },
  }
  clusters.add(cluster)
  try {
    await asPostgres('initdb', [
      '-D',
      primary.dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
      '--no-instructions',
    ])
    // Settings appended last win over initdb's; the standby copies them with the data directory.
    appendFileSync(
      join(primary.dataDir, 'postgresql.conf'),
      [
        '',
        `port = ${primaryPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${root}'`,
        'wal_level = replica',
        'max_wal_senders = 5',
        'hot_standby = on',
        // Named once the standby streams (below): until then a commit would wait for a standby that is not there.
        "synchronous_standby_names = ''",
        'synchronous_commit = on',
        // The tests kill processes, never the machine: the page cache survives, so what they check (the standby has
        // every acknowledged commit) is the same without fsync, and the shared machine is spared the flushes.
        'fsync = off',
        '',
      ].join('\n'),
    )
    started.add(primary.dataDir)
    await pgCtl(primary, root, 'start')
    await options.prepare?.(primary)
    await asPostgres('pg_basebackup', [
      '-d',
      // -R writes this connection into the standby's primary_conninfo: through the link when there is one.
      `host=127.0.0.1 port=${replicationLink?.port ?? primaryPort} user=postgres application_name=${STANDBY_NAME}`,
      '-D',
      standby.dataDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ])
    appendFileSync(join(standby.dataDir, 'postgresql.conf'), `\nport = ${standbyPort}\n`)
    started.add(standby.dataDir)
    await pgCtl(standby, root, 'start')
    if (options.synchronous) {
      // As an operator turns it on: ALTER SYSTEM on the primary (after the clone, so the standby does not inherit it).
      await primary.query(`ALTER SYSTEM SET synchronous_standby_names = '${STANDBY_NAME}'`)
      await primary.query('SELECT pg_reload_conf()')
    }
    await cluster.waitForStandby()
    return cluster
  } catch (error) {
    await cluster.close()
    throw error
  }
}

/**
 * describe() for tests that start their own cluster: they run on the Postgres run only (DATABASE_URL), and are skipped
 * with a visible notice on the embedded run, or where the binaries or the postgres user are missing (a failure under
 * CI=true, where .ci/run provides both).
 */
export function describeWithCluster(name: string, onPostgresRun: boolean, body: () => void): void {
  const missing = onPostgresRun ? clusterUnavailable() : 'it runs on the Postgres run only (DATABASE_URL)'
  if (missing === undefined) {
    describe(name, body)
    return
  }
  if (onPostgresRun && process.env.CI === 'true') {
    describe(name, () => it('can start a Postgres cluster', () => Promise.reject(new Error(missing))))
    return
  }
  console.warn(`\n⚠  SKIPPED: ${name}: ${missing}\n`)
  describe.skip(name, body)
}
