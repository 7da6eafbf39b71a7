// SIGTERM with keep-alive clients connected (a rolling deploy): idle keep-alive connections are closed,
// a request in flight is answered with `Connection: close`, and the process exits 0 promptly — not
// after its own SHUTDOWN_GRACE_MS timer with status 1.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/connect.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { startServer, type ServerProcess } from '../helpers/process.js'

/** The grace timer is kept well above what a clean shutdown takes, so that hitting it fails the test. */
const GRACE_MS = 8000
/** "Promptly": from the last response (or the signal, when nothing is in flight) to the exit. */
const PROMPT_MS = 2000

let dataDir: string
let database: TestDatabase | undefined
let handle: DatabaseHandle | undefined
let credentials: { organisationId: string; apiKey: string }
const servers: ServerProcess[] = []

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'canopy-shutdown-'))
  if (onPostgres()) {
    database = await createTestDatabase()
    handle = await database.open(1)
    const org: OrgFixture = await createOrg(handle.db)
    credentials = { organisationId: org.organisationId, apiKey: org.apiKey }
  }
})
afterAll(async () => {
  for (const server of servers) server.child.kill('SIGKILL')
  await handle?.close()
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

/** A server on a clone of the test database (Postgres), or on an embedded database in a temporary directory. */
async function start(): Promise<{ server: ServerProcess; port: number }> {
  const env: Record<string, string> = database ? { DATABASE_URL: database.url! } : { DATA_DIR: dataDir }
  const server = startServer({ ...env, SHUTDOWN_GRACE_MS: String(GRACE_MS), LOG_LEVEL: 'info' })
  servers.push(server)
  const baseUrl = await server.ready
  if (!database) credentials = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8'))
  return { server, port: Number(new URL(baseUrl).port) }
}

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** A raw HTTP/1.1 connection (keep-alive by default) that reads one response at a time. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1')
  let buffered = Buffer.alloc(0)
  let waiting: (() => void) | undefined
  let closedAt: number | undefined
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      closedAt = Date.now()
      resolve(closedAt)
      waiting?.()
    }),
  )
  socket.on('error', () => {})
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    waiting?.()
  })
  const parse = (): RawResponse | undefined => {
    const end = buffered.indexOf('\r\n\r\n')
    if (end < 0) return undefined
    const [statusLine, ...lines] = buffered.subarray(0, end).toString('latin1').split('\r\n')
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    )
    const length = Number(headers['content-length'] ?? 0)
    if (buffered.length < end + 4 + length) return undefined
    const body = buffered.subarray(end + 4, end + 4 + length).toString('utf8')
    buffered = buffered.subarray(end + 4 + length)
    return { status: Number(statusLine?.split(' ')[1]), headers, body }
  }
  return {
    closed,
    isClosed: () => closedAt !== undefined,
    write: (text: string) => new Promise<void>((resolve) => socket.write(text, () => resolve())),
    async response(): Promise<RawResponse> {
      for (;;) {
        const parsed = parse()
        if (parsed) return parsed
        if (closedAt !== undefined) throw new Error('connection closed before a complete response')
        await new Promise<void>((resolve) => (waiting = resolve))
      }
    },
    destroy: () => socket.destroy(),
  }
}

const getHealth = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n'

function organisationPost(body: string): string {
  return (
    `POST /v3/organisations HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${credentials.apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
  )
}

const childBody = () =>
  JSON.stringify({
    parentOrganisationId: credentials.organisationId,
    tradingName: 'Rolling Deploy',
    legalName: 'Rolling Deploy Ltd',
    address: { line1: '1 A St', city: 'Leeds', postalCode: 'LS1 1AA', countryCode: 'GBR' },
    currencyCode: 'GBP',
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('SIGTERM with keep-alive clients connected', () => {
  it('an idle keep-alive connection (node:http Agent): closed by the server, exit 0 promptly', async () => {
    const { server, port } = await start()
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const first = await new Promise<{ status: number; connection: string | undefined; socketClosed: Promise<void> }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
        const socketClosed = new Promise<void>((closed) => res.socket.once('close', () => closed()))
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, socketClosed }))
      })
      req.on('error', reject)
      req.end()
    })
    expect(first.status).toBe(200)
    expect(first.connection).toBe('keep-alive')
    await sleep(100)
    expect(Object.values(agent.freeSockets).flat()).toHaveLength(1)

    const signalled = Date.now()
    server.child.kill('SIGTERM')
    await first.socketClosed
    expect(await server.exited).toBe(0)
    expect(Date.now() - signalled).toBeLessThan(PROMPT_MS)
    expect(server.output()).toContain('"msg":"shutting down"')
    expect(server.output()).not.toMatch(/killed by timeout/)
    agent.destroy()
  })

  it('a request in flight on a keep-alive connection: answered with Connection: close, then the connection is closed and the process exits 0 promptly', async () => {
    const { server, port } = await start()
    // The same keep-alive connection serves a first request, then carries one that is in flight at SIGTERM.
    const conn = rawConnection(port)
    await conn.write(getHealth)
    const warm = await conn.response()
    expect(warm.status).toBe(200)
    expect(warm.headers.connection).toBe('keep-alive')

    const body = childBody()
    const half = Math.floor(body.length / 2)
    await conn.write(organisationPost(body) + body.slice(0, half))
    await sleep(200)
    server.child.kill('SIGTERM')
    await sleep(300)
    expect(conn.isClosed()).toBe(false)
    await conn.write(body.slice(half))
    const answered = await conn.response()
    const answeredAt = Date.now()
    expect(answered.status, answered.body).toBe(201)
    expect(answered.headers.connection).toBe('close')
    expect(JSON.parse(answered.body)).toMatchObject({ tradingName: 'Rolling Deploy' })
    await conn.closed
    expect(await server.exited).toBe(0)
    expect(Date.now() - answeredAt).toBeLessThan(PROMPT_MS)
    expect(server.output()).not.toMatch(/killed by timeout/)
  })

  it('both at once: the idle connection is closed at SIGTERM, the busy one after its answer, exit 0', async () => {
    const { server, port } = await start()
    const idle = rawConnection(port)
    await idle.write(getHealth)
    expect((await idle.response()).headers.connection).toBe('keep-alive')
    const busy = rawConnection(port)
    await busy.write(getHealth)
    await busy.response()

    const body = childBody()
    const half = Math.floor(body.length / 2)
    await busy.write(organisationPost(body) + body.slice(0, half))
    await sleep(200)
    const signalled = Date.now()
    server.child.kill('SIGTERM')
    // The idle connection goes at once; the busy one waits for its answer.
    expect((await idle.closed) - signalled).toBeLessThan(PROMPT_MS)
    expect(busy.isClosed()).toBe(false)
    await busy.write(body.slice(half))
    const answered = await busy.response()
    const answeredAt = Date.now()
    expect(answered.status, answered.body).toBe(201)
    expect(answered.headers.connection).toBe('close')
    await busy.closed
    expect(await server.exited).toBe(0)
    expect(Date.now() - answeredAt).toBeLessThan(PROMPT_MS)
  })
})
