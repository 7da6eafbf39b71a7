// The webhook worker's log during a failover (issue 23): a database out of reach is routine — one warning when it
// starts (as the request path logs its 503s) and one line when claims work again — while a real bug (here the
// deliveries table is gone) is an error, every time. The failover test checks the same on a real failover: no error
// line from the API process.
import type { FastifyBaseLogger } from 'fastify'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { openPostgres, type DatabaseHandle } from '../../src/db/connect.js'
import { noMetrics } from '../../src/metrics.js'
import { WebhookWorker } from '../../src/services/webhooks/worker.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { freePort } from '../helpers/process.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const POLL_MS = 50

interface Line {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
  msg: string
  fields: Record<string, unknown>
}

/** A logger that keeps what it is given (the worker only logs; nothing here parses pino's output). */
function recordingLogger(lines: Line[]): FastifyBaseLogger {
  const at =
    (level: Line['level']) =>
    (fields: unknown, msg?: string): void => {
      if (typeof fields === 'string') lines.push({ level, msg: fields, fields: {} })
      else lines.push({ level, msg: msg ?? '', fields: (fields ?? {}) as Record<string, unknown> })
    }
  const logger = {
    level: 'debug',
    fatal: at('fatal'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    silent: () => {},
    child: () => logger,
  }
  return logger as unknown as FastifyBaseLogger
}

function workerOn(handle: DatabaseHandle, lines: Line[]): WebhookWorker {
  return new WebhookWorker({
    db: handle.db,
    post: () => Promise.reject(new Error('no delivery is due in these tests')),
    clock: systemClock,
    wallClock: systemClock,
    random: () => 0.5,
    schedule: [5000],
    leaseMs: 60_000,
    pollIntervalMs: POLL_MS,
    concurrency: 4,
    log: recordingLogger(lines),
    metrics: noMetrics,
  })
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const at = (lines: Line[], level: Line['level']) => lines.filter((line) => line.level === level)

describe('webhook worker log levels', () => {
  const cleanup: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step()
  })

  it('a database out of reach: one warning for the outage, then quiet (debug); never an error', async () => {
    const lines: Line[] = []
    const nowhere = openPostgres({ url: `postgres://postgres@127.0.0.1:${await freePort()}/canopy`, connectTimeoutMs: 200 })
    cleanup.push(() => nowhere.close())
    const worker = workerOn(nowhere, lines)
    worker.start()
    cleanup.push(() => worker.stop())
    await wait(POLL_MS * 8)
    expect(at(lines, 'error')).toEqual([])
    expect(at(lines, 'warn').map((l) => l.msg)).toEqual([
      'webhook worker could not claim deliveries: the database is unavailable; retrying at every poll',
    ])
    expect(at(lines, 'warn')[0]!.fields.err).toMatchObject({ code: 'ECONNREFUSED' })
    expect(at(lines, 'debug').length).toBeGreaterThan(0)
  })

  it.runIf(onPostgres())('the database back (a proxy refusing, then accepting): one info line, and claims go on', async () => {
    const lines: Line[] = []
    const database: TestDatabase = await createTestDatabase()
    cleanup.push(() => database.drop())
    const target = new URL(database.url!)
    const proxy: TcpProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) }, { accepting: false })
    cleanup.push(() => proxy.close())
    const handle = openPostgres({ url: proxy.url(database.url!), connectTimeoutMs: 200 })
    cleanup.push(() => handle.close())
    const worker = workerOn(handle, lines)
    worker.start()
    cleanup.push(() => worker.stop())
    await wait(POLL_MS * 4)
    await proxy.accept()
    const deadline = Date.now() + 5_000
    while (at(lines, 'info').length === 0 && Date.now() < deadline) await wait(POLL_MS)
    expect(at(lines, 'error')).toEqual([])
    expect(at(lines, 'warn')).toHaveLength(1)
    expect(at(lines, 'info').map((l) => l.msg)).toEqual(['webhook worker: the database is available again'])
    expect(at(lines, 'info')[0]!.fields.failures).toBeGreaterThanOrEqual(2)
    // Claims work again: no new line of any level while the worker keeps polling an empty queue.
    const count = lines.length
    await wait(POLL_MS * 4)
    expect(lines.slice(count).filter((l) => l.level !== 'debug')).toEqual([])
  })

  it('a real bug (the deliveries table gone) is an error at every poll, never a warning', async () => {
    const lines: Line[] = []
    const database = await createTestDatabase()
    cleanup.push(() => database.drop())
    const handle = await database.open()
    cleanup.push(() => handle.close())
    await sql`DROP TABLE webhook_deliveries CASCADE`.execute(handle.db)
    const worker = workerOn(handle, lines)
    worker.start()
    cleanup.push(() => worker.stop())
    const deadline = Date.now() + 5_000
    while (at(lines, 'error').length < 2 && Date.now() < deadline) await wait(POLL_MS)
    expect(at(lines, 'error').length).toBeGreaterThanOrEqual(2)
    for (const line of at(lines, 'error')) expect(line.msg).toBe('webhook worker could not claim deliveries')
    expect(at(lines, 'warn')).toEqual([])
  })
})
