// An app over a fresh database per test file, with a controllable clock and optional log capture.
import { Writable } from 'node:stream'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Kysely } from 'kysely'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import type { Database } from '../../src/db/database.js'
import { PrometheusMetrics } from '../../src/metrics.js'
import type { PublicFileDirs } from '../../src/services/public-files.js'
import type { HubAssets } from '../../src/services/hub-assets.js'
import { createTestDatabase, type TestDatabase } from './db.js'
import { TEST_CLOCK_START } from './test-clock.js'

export class TestClock {
  constructor(private current = new Date(TEST_CLOCK_START.getTime())) {}
  now = (): Date => new Date(this.current.getTime())
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms)
  }
}

export interface TestApp {
  app: FastifyInstance
  db: Kysely<Database>
  database: TestDatabase
  config: Config
  clock: TestClock
  /** Log lines written by the app (only when captureLogs is set). */
  logs: string[]
  /** The app's metrics (only when the metrics option is set). */
  metrics: PrometheusMetrics | undefined
  close(): Promise<void>
}

export async function createTestApp(
  env: Record<string, string> = {},
  options: {
    captureLogs?: boolean
    metrics?: boolean
    beforeReady?: (app: FastifyInstance) => void
    publicFiles?: PublicFileDirs
    hubAssets?: HubAssets
  } = {},
): Promise<TestApp> {
  // The table statistics worker would ANALYZE under a test's feet (a test that locks a table would see its timeout
  // logged): off unless a test asks for it (test/integration/table-statistics.test.ts).
  const config = loadConfig({ LOG_LEVEL: options.captureLogs ? 'info' : 'silent', TABLE_STATISTICS_WORKER: 'false', ...env })
  const database = await createTestDatabase()
  const handle = await database.open()
  const clock = new TestClock()
  const logs: string[] = []
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean))
      done()
    },
  })
  const metrics = options.metrics ? new PrometheusMetrics({ now: () => clock.now().getTime() }) : undefined
  const app = await buildApp({
    config,
    database: handle,
    clock: clock.now,
    logStream,
    metrics,
    publicFiles: options.publicFiles,
    hubAssets: options.hubAssets,
  })
  options.beforeReady?.(app)
  await app.ready()
  return {
    app,
    db: handle.db,
    database,
    config,
    clock,
    logs,
    metrics,
    async close() {
      await app.close()
      await database.drop()
    },
  }
}

export type Response = LightMyRequestResponse

/** Small request helper: JSON in, JSON out, with an optional bearer credential. */
export function client(app: FastifyInstance, credential?: string) {
  const send = (method: InjectOptions['method'], url: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method,
      url,
      headers: { ...(credential ? { authorization: `Bearer ${credential}` } : {}), ...headers },
      ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }),
    })
  return {
    get: (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers),
    post: (url: string, body?: unknown, headers?: Record<string, string>) => send('POST', url, body, headers),
    patch: (url: string, body?: unknown, headers?: Record<string, string>) => send('PATCH', url, body, headers),
    options: (url: string, headers?: Record<string, string>) => send('OPTIONS', url, undefined, headers),
  }
}
