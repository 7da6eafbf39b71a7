// Start-up without the database: one structured (pino-format JSON) line that says what is wrong, retries
// with backoff for DATABASE_STARTUP_TIMEOUT_MS, then exit 1 — or start as soon as the database answers.
import { createServer } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { createTestDatabase, onPostgres } from '../helpers/db.js'
import { startServer, type ServerProcess } from '../helpers/process.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const servers: ServerProcess[] = []
const proxies: TcpProxy[] = []
afterAll(async () => {
  for (const server of servers) server.child.kill('SIGKILL')
  for (const proxy of proxies) await proxy.close()
})

function start(env: Record<string, string>): ServerProcess {
  const server = startServer(env)
  servers.push(server)
  return server
}

/** A local port on which nothing listens. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

interface LogLine {
  level: number
  time: number
  pid: number
  hostname: string
  msg: string
  err?: { type: string; code?: string; message: string; stack?: string }
  [key: string]: unknown
}

/** Every line of output must be a pino-format JSON object; no raw stack trace. */
function logLines(output: string): LogLine[] {
  const lines = output.split('\n').filter((line) => line.trim() !== '')
  expect(lines.length).toBeGreaterThan(0)
  expect(output).not.toMatch(/^\s+at /m)
  return lines.map((line) => {
    const parsed = JSON.parse(line) as LogLine
    expect(parsed).toMatchObject({ level: expect.any(Number), time: expect.any(Number), pid: expect.any(Number), msg: expect.any(String) })
    expect(parsed.err?.stack).toBeUndefined()
    return parsed
  })
}

describe('start-up when Postgres cannot be reached', () => {
  it('nothing listens: one warning naming the problem, retries for DATABASE_STARTUP_TIMEOUT_MS, then exit 1', async () => {
    const port = await closedPort()
    const started = Date.now()
    const server = start({ DATABASE_URL: `postgres://canopy:s3cret@127.0.0.1:${port}/canopy`, DATABASE_STARTUP_TIMEOUT_MS: '1500' })
    expect(await server.exited).toBe(1)
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(1500)
    expect(elapsed).toBeLessThan(15_000)
    const lines = logLines(server.output())
    const database = { host: '127.0.0.1', port, database: 'canopy' }
    // One line for the problem (it does not change from one attempt to the next), one to give up.
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'database is unreachable; retrying',
        database,
        err: expect.objectContaining({ code: 'ECONNREFUSED', message: expect.stringContaining('ECONNREFUSED') }),
        attempt: 1,
        retryInMs: 250,
      }),
      expect.objectContaining({
        level: 60,
        msg: expect.stringMatching(
          /^canopy: the database is still unreachable after \d+ attempts in \d+ ms \(DATABASE_STARTUP_TIMEOUT_MS\); exiting$/,
        ),
        database,
        err: expect.objectContaining({ code: 'ECONNREFUSED' }),
      }),
    ])
    // The backoff made several attempts within the budget.
    expect(Number(/after (\d+) attempts/.exec(lines[1]!.msg)?.[1])).toBeGreaterThanOrEqual(3)
    expect(server.output()).not.toContain('s3cret')
  })

  it('DATABASE_STARTUP_TIMEOUT_MS=0: one attempt, then exit 1', async () => {
    const port = await closedPort()
    const server = start({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/canopy`, DATABASE_STARTUP_TIMEOUT_MS: '0' })
    expect(await server.exited).toBe(1)
    const lines = logLines(server.output())
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ level: 60, msg: expect.stringContaining('after 1 attempt in'), err: { code: 'ECONNREFUSED' } })
  })

  it('a database that accepts connections but never answers: each attempt is bounded by DATABASE_CONNECT_TIMEOUT_MS', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: await closedPort() })
    proxies.push(proxy)
    proxy.freeze()
    const started = Date.now()
    const server = start({
      DATABASE_URL: proxy.url('postgres://postgres@127.0.0.1/canopy'),
      DATABASE_CONNECT_TIMEOUT_MS: '300',
      DATABASE_STARTUP_TIMEOUT_MS: '1000',
    })
    expect(await server.exited).toBe(1)
    expect(Date.now() - started).toBeLessThan(15_000)
    const lines = logLines(server.output())
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'database is unreachable; retrying',
      err: { message: expect.stringMatching(/timeout/) },
    })
    expect(lines.at(-1)).toMatchObject({ level: 60, msg: expect.stringContaining('still unreachable') })
  })

  it.runIf(onPostgres())('the database becomes reachable during the retry window: the server starts and serves', async () => {
    const database = await createTestDatabase()
    const target = new URL(database.url!)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) }, { accepting: false })
    proxies.push(proxy)
    try {
      const server = start({ DATABASE_URL: proxy.url(database.url!), DATABASE_STARTUP_TIMEOUT_MS: '30000' })
      for (let i = 0; i < 200 && !server.output().includes('database is unreachable'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(server.output()).toContain('"msg":"database is unreachable; retrying"')
      await proxy.accept()
      const baseUrl = await server.ready
      expect(server.output()).toContain('"msg":"database is reachable"')
      const ready = await fetch(`${baseUrl}/readyz`)
      expect(await ready.json()).toEqual({ status: 'ready', database: 'postgres' })
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    } finally {
      await proxy.close()
      await database.drop()
    }
  })
})
