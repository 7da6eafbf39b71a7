// No server-side request forgery: refused addresses at create time (through the API), and at connect time for the
// address actually dialled (through the client), each with no connection made.
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AddressPolicy, BlockedAddressError } from '../../src/services/webhooks/address-policy.js'
import { webhookClient } from '../../src/services/webhooks/http-client.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const REFUSED = [
  'http://127.0.0.1/hook',
  'http://127.1.2.3/hook',
  'http://[::1]/hook',
  'http://10.0.0.1/hook',
  'http://172.16.0.1/hook',
  'http://192.168.1.1/hook',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1/hook',
  'http://100.100.100.200/hook',
  'http://0.0.0.0/hook',
  'http://0/hook',
  'http://2130706433/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://[::ffff:8.8.8.8]/hook',
  'http://[fc00::1]/hook',
  'http://[fd00:ec2::254]/hook',
  'http://[fe80::1]/hook',
  'http://[::]/hook',
  'http://[64:ff9b::a9fe:a9fe]/hook',
  'http://localhost/hook',
  'https://user:secret@hooks.example.com/hook',
  'ftp://hooks.example.com/hook',
  'file:///etc/passwd',
]

describe('webhook URLs at create time', () => {
  let t: TestApp
  let org: OrgFixture
  let receiver: WebhookReceiver

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_WORKER: 'false' })
    org = await createOrg(t.db)
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await t.close()
  })

  it.each(REFUSED)('refuses %s (400 WEBHOOK_URL_REFUSED)', async (url) => {
    const res = await client(t.app, org.apiKey).post('/v3/webhook-endpoints', { organisationId: org.organisationId, url })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'WEBHOOK_URL_REFUSED', details: [{ path: '/url' }] })
  })

  it('refuses a loopback receiver, and changing a URL to one, without connecting to it', async () => {
    const res = await client(t.app, org.apiKey).post('/v3/webhook-endpoints', { organisationId: org.organisationId, url: receiver.url })
    expect(res.statusCode).toBe(400)
    expect(receiver.connections).toBe(0)
  })

  it('refuses http: unless WEBHOOK_ALLOW_HTTP=true', async () => {
    const strict = await createTestApp({ WEBHOOK_WORKER: 'false' })
    try {
      const owner = await createOrg(strict.db)
      const res = await client(strict.app, owner.apiKey).post('/v3/webhook-endpoints', {
        organisationId: owner.organisationId,
        url: 'http://93.184.215.14/hook',
      })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toContain('https')
      const ok = await client(strict.app, owner.apiKey).post('/v3/webhook-endpoints', {
        organisationId: owner.organisationId,
        url: 'https://93.184.215.14/hook',
      })
      expect(ok.statusCode).toBe(201)
      const changed = await client(strict.app, owner.apiKey).patch(`/v3/webhook-endpoints/${ok.json().id}`, { url: 'https://10.1.1.1/' })
      expect(changed.statusCode).toBe(400)
    } finally {
      await strict.close()
    }
  })
})

describe('the webhook client at connect time', () => {
  let server: Server
  let connections = 0
  let port: number
  let respond: (res: ServerResponse) => void = (res) => res.end('ok')

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume()
      req.on('end', () => respond(res))
    })
    server.on('connection', () => connections++)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })

  const post = async (policy: AddressPolicy, url: string, lookup?: (host: string) => Promise<string[]>, totalTimeoutMs?: number) => {
    const http = webhookClient({ policy, lookup, totalTimeoutMs })
    try {
      return await http.post(url, { 'content-type': 'application/json' }, '{}')
    } finally {
      await http.close()
    }
  }

  it.each([
    ['a literal loopback address', () => `http://127.0.0.1:${port}/`, undefined],
    ['a name resolving to loopback', () => `http://localhost:${port}/`, undefined],
    ['a public-looking name that resolves to loopback (rebinding)', () => `http://hooks.example.com:${port}/`, async () => ['127.0.0.1']],
    [
      'a name with one public and one private address',
      () => `http://hooks.example.com:${port}/`,
      async () => ['93.184.215.14', '10.0.0.1'],
    ],
  ])('refuses %s with no connection made', async (_name, url, lookup) => {
    const before = connections
    await expect(post(new AddressPolicy(), url(), lookup)).rejects.toBeInstanceOf(BlockedAddressError)
    expect(connections).toBe(before)
  })

  it('reaches loopback once WEBHOOK_ALLOWED_CIDRS opens it', async () => {
    const res = await post(new AddressPolicy('127.0.0.0/8'), `http://127.0.0.1:${port}/`)
    expect(res.statusCode).toBe(200)
    const named = await post(new AddressPolicy('127.0.0.0/8'), `http://hooks.example.com:${port}/`, async () => ['127.0.0.1'])
    expect(named.statusCode).toBe(200)
  })

  it('reads at most 4 KiB of an answer, and gives up on a slow receiver at the total timeout', async () => {
    respond = (res) => res.end('x'.repeat(1_000_000))
    const big = await post(new AddressPolicy('127.0.0.0/8'), `http://127.0.0.1:${port}/`)
    expect(big.body.length).toBe(4096)
    respond = (res) => setTimeout(() => res.end('late'), 3000).unref()
    const started = Date.now()
    await expect(post(new AddressPolicy('127.0.0.0/8'), `http://127.0.0.1:${port}/`, undefined, 500)).rejects.toThrow()
    expect(Date.now() - started).toBeLessThan(2000)
    respond = (res) => res.end('ok')
  })
})
