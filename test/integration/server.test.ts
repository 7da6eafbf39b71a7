import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEmptyPostgresDatabase, onPostgres } from '../helpers/db.js'
import { freePort, startServer, type ServerProcess } from '../helpers/process.js'

let dataDir: string
let server: ServerProcess | undefined

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'canopy-server-'))
})
afterAll(() => {
  server?.child.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

const credentialsFile = () => join(dataDir, 'demo-credentials.json')

/** Sends the head of a request and part of its body, and resolves with the raw response once complete. */
function slowRequest(baseUrl: string, path: string, apiKey: string, body: string) {
  const { port } = new URL(baseUrl)
  const socket = connect(Number(port), '127.0.0.1')
  const head =
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`
  let response = ''
  const done = new Promise<string>((resolve) => {
    socket.on('data', (chunk) => {
      response += chunk.toString()
    })
    socket.on('close', () => resolve(response))
  })
  const half = Math.floor(body.length / 2)
  const sent = new Promise<void>((resolve) => socket.write(head + body.slice(0, half), () => resolve()))
  return { sent, finish: () => socket.end(body.slice(half)), done }
}

// Real processes (tsx + PGlite start-up take seconds each on a loaded machine): a wider budget per test.
describe('the service process on the embedded database', { timeout: 120_000 }, () => {
  it('starts, prints the demo credentials once, and answers with them', async () => {
    const metricsPort = await freePort()
    server = startServer({ DATA_DIR: dataDir, METRICS_PORT: String(metricsPort) })
    const baseUrl = await server.ready
    const saved = JSON.parse(readFileSync(credentialsFile(), 'utf8'))
    expect(server.output()).toContain(saved.apiKey)
    expect(server.output()).toContain(saved.organisationId)
    // The Hub's demo admin: a one-time link to set its password, on the port actually listened on.
    const link = new RegExp(`${baseUrl.replace(/[.]/g, '\\.')}/hub/set-password#token=([\\w-]{43})`).exec(server.output())
    expect(link).not.toBeNull()
    const check = await fetch(`${baseUrl}/hub/api/password-links/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: baseUrl },
      body: JSON.stringify({ token: link?.[1] }),
    })
    expect(await check.json()).toEqual({ email: 'admin@demo.canopy.invalid' })

    const ok = await fetch(`${baseUrl}/v3/organisations/${saved.organisationId}`, { headers: { authorization: `Bearer ${saved.apiKey}` } })
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as { mcc: string }).mcc).toBe('5992')
    const denied = await fetch(`${baseUrl}/v3/organisations/${saved.organisationId}`)
    expect(denied.status).toBe(401)
    expect(await denied.json()).toMatchObject({ code: 'UNAUTHORIZED' })

    // Metrics on their own port only; the compiled exchange rates are months old, so start-up warned.
    expect((await fetch(`${baseUrl}/metrics`)).status).toBe(404)
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    expect(metrics).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/organisations\/:id",status_class="2xx"\} 1$/m)
    expect(metrics).toMatch(/^canopy_fx_rates_info\{date="2026-02-06",origin="embedded"\} 1$/m)
    expect(server.output()).toMatch(/metrics listening at http:\/\/127\.0\.0\.1:\d+\/metrics/)
    expect(server.output()).toMatch(/exchange rates in use are \d+ days old \(2026-02-06, embedded\)/)
  })

  it('refuses a second process on the same data directory', async () => {
    const second = startServer({ DATA_DIR: dataDir })
    expect(await second.exited).toBe(1)
    expect(second.output()).toMatch(/in use by process/)
  })

  it('on SIGTERM finishes the in-flight request, then exits and releases the database', async () => {
    const running = server!
    const baseUrl = await running.ready
    const saved = JSON.parse(readFileSync(credentialsFile(), 'utf8'))
    const body = JSON.stringify({
      parentOrganisationId: saved.organisationId,
      tradingName: 'Late Child',
      legalName: 'Late Child Ltd',
      address: { line1: '1 A St', city: 'Leeds', postalCode: 'LS1 1AA', countryCode: 'GBR' },
      currencyCode: 'GBP',
    })
    const request = slowRequest(baseUrl, '/v3/organisations', saved.apiKey, body)
    await request.sent
    await new Promise((resolve) => setTimeout(resolve, 200))
    running.child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 300))
    request.finish()
    const raw = await request.done
    expect(raw).toMatch(/^HTTP\/1\.1 201/)
    expect(await running.exited).toBe(0)
    expect(existsSync(join(dataDir, 'pglite', 'canopy.lock'))).toBe(false)
    server = undefined
  })

  it('restarts on the same data without new demo credentials (and adds DEMO_ALLOWED_ORIGINS to the demo organisation)', async () => {
    const before = readFileSync(credentialsFile(), 'utf8')
    server = startServer({ DATA_DIR: dataDir, DEMO_ALLOWED_ORIGINS: 'http://localhost:4000, HTTP://LOCALHOST:4000' })
    const base = await server.ready
    expect(readFileSync(credentialsFile(), 'utf8')).toBe(before)
    expect(server.output()).not.toContain(JSON.parse(before).apiKey)
    expect(server.output()).toContain('demo credentials are in')
    const { organisationId, apiKey } = JSON.parse(before)
    const org = await fetch(`${base}/v3/organisations/${organisationId}`, { headers: { authorization: `Bearer ${apiKey}` } })
    expect(((await org.json()) as { allowedOrigins: unknown }).allowedOrigins).toEqual(['http://localhost:4000'])
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    server = undefined
  })

  it('stops at start-up with a clear message on bad configuration', async () => {
    const bad = startServer({ DATA_DIR: dataDir, PORT: 'eighty', RATE_LIMIT_PER_MINUTE: '-1' })
    expect(await bad.exited).toBe(1)
    expect(bad.output()).toMatch(/invalid configuration[\s\S]*PORT[\s\S]*RATE_LIMIT_PER_MINUTE/)
  })
})

describe.runIf(onPostgres())('the service process on Postgres', () => {
  it('refuses an unmigrated database unless MIGRATE_ON_START is set', async () => {
    const database = await createEmptyPostgresDatabase()
    try {
      const refused = startServer({ DATABASE_URL: database.url })
      expect(await refused.exited).toBe(1)
      expect(refused.output()).toMatch(/pending migration[\s\S]*npm run db:migrate/)

      const migrating = startServer({ DATABASE_URL: database.url, MIGRATE_ON_START: 'true' })
      const baseUrl = await migrating.ready
      const ready = await fetch(`${baseUrl}/readyz`)
      expect(await ready.json()).toEqual({ status: 'ready', database: 'postgres' })
      migrating.child.kill('SIGTERM')
      expect(await migrating.exited).toBe(0)
    } finally {
      await database.drop()
    }
  })
})
