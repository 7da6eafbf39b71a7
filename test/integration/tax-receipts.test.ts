import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TaxReceiptSender } from '../../src/services/tax-receipts.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

interface Received {
  from: string
  to: string[]
  raw: string
}

let smtp: SMTPServer
let received: Received[] = []
let rejectNext = 0
let t: TestApp
let org: OrgFixture
let quoteId: string

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = ''
      stream.on('data', (chunk: Buffer) => {
        raw += chunk.toString()
      })
      stream.on('end', () => {
        if (rejectNext > 0) {
          rejectNext--
          const error = Object.assign(new Error('mailbox temporarily unavailable'), { responseCode: 451 })
          callback(error)
          return
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
  const { port } = smtp.server.address() as AddressInfo
  t = await createTestApp(
    { SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_FROM: 'Receipts <receipts@canopy.test>', OUTBOX_POLL_INTERVAL_MS: '50' },
    { captureLogs: true },
  )
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db, { tradingName: 'Blossom & Bloom' })
  quoteId = (await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))).json().quoteId
})
afterAll(async () => {
  await t.close()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

async function until<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const receiptOf = (allocationId: string) =>
  t.db.selectFrom('tax_receipts').selectAll().where('allocation_id', '=', allocationId).executeTakeFirstOrThrow()

const allocateWithReceipt = async (email: string) => {
  const res = await client(t.app, org.apiKey).post(
    '/funds/allocations',
    {
      organisationId: org.organisationId,
      quoteId,
      contribution: { amount: 10 },
      issueTaxReceipt: true,
      consumerEmail: email,
    },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode).toBe(201)
  return res.json().fundsAllocationId as string
}

describe('tax receipts by SMTP', () => {
  it('delivers the queued receipt: what was contributed, to whom, and that it may be tax deductible', async () => {
    received = []
    const id = await allocateWithReceipt('donor@example.com')
    const message = await until(async () => received[0])
    expect(message.from).toBe('receipts@canopy.test')
    expect(message.to).toEqual(['donor@example.com'])
    const text = message.raw.replace(/=\r\n/g, '')
    expect(text).toMatch(/Subject: Your contribution receipt from Blossom & Bloom/)
    expect(text).toMatch(/Amount paid: GBP 10\.00/)
    expect(text).toMatch(/Rewild Trust \(demo\): GBP 4\.04/)
    expect(text).toMatch(/Ocean Commons \(demo\): GBP 4\.03/)
    expect(text).toMatch(/may be tax deductible/)
    expect(text).toContain(id)
    const row = await until(async () => {
      const r = await receiptOf(id)
      return r.status === 'sent' ? r : undefined
    })
    expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null })
    expect(row.sent_at).toBeInstanceOf(Date)
  })

  it('retries with backoff after a temporary SMTP failure, then marks it sent', async () => {
    received = []
    rejectNext = 1
    const id = await allocateWithReceipt('retry@example.com')
    const failed = await until(async () => {
      const r = await receiptOf(id)
      return r.attempts === 1 && r.last_error ? r : undefined
    })
    expect(failed.status).toBe('pending')
    expect(failed.last_error).toMatch(/451|temporarily/)
    expect(failed.next_attempt_at.getTime()).toBeGreaterThan(t.clock.now().getTime())
    // Not due until the backoff has passed on the app's clock.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await receiptOf(id)).status).toBe('pending')
    t.clock.advance(60_000)
    const sent = await until(async () => {
      const r = await receiptOf(id)
      return r.status === 'sent' ? r : undefined
    })
    expect(sent.attempts).toBe(2)
    expect(received.map((m) => m.to[0])).toEqual(['retry@example.com'])
  })

  it("never logs the consumer's e-mail address", () => {
    const logs = t.logs.join('\n')
    expect(logs).toContain('tax receipt not delivered')
    expect(logs).not.toContain('retry@example.com')
    expect(logs).not.toContain('donor@example.com')
  })

  it('gives up after the maximum number of attempts', async () => {
    // An app without SMTP: nothing sends its receipts but the sender driven here.
    const quiet = await createTestApp()
    try {
      await importDemoCatalogue(quiet.db)
      const owner = await createOrg(quiet.db)
      const quote = (await client(quiet.app, owner.apiKey).post('/quotes/carbon', floristQuote(owner.organisationId))).json().quoteId
      const res = await client(quiet.app, owner.apiKey).post(
        '/funds/allocations',
        {
          organisationId: owner.organisationId,
          quoteId: quote,
          contribution: { amount: 10 },
          issueTaxReceipt: true,
          consumerEmail: 'bounce@example.com',
        },
        { 'idempotency-key': randomUUID() },
      )
      const id = res.json().fundsAllocationId as string
      let now = quiet.clock.now()
      const sender = new TaxReceiptSender(
        quiet.db,
        async () => {
          throw new Error('550 no such user')
        },
        {
          pollIntervalMs: 1000,
          now: () => now,
          log: quiet.app.log,
          maxAttempts: 3,
        },
      )
      const delays: number[] = []
      for (let i = 0; i < 3; i++) {
        expect(await sender.runOnce()).toEqual({ sent: 0, failed: 1 })
        const row = await quiet.db.selectFrom('tax_receipts').selectAll().where('allocation_id', '=', id).executeTakeFirstOrThrow()
        if (row.status === 'pending') delays.push(row.next_attempt_at.getTime() - now.getTime())
        now = new Date(now.getTime() + 3_600_000)
      }
      expect(delays).toEqual([1000, 2000])
      const row = await quiet.db.selectFrom('tax_receipts').selectAll().where('allocation_id', '=', id).executeTakeFirstOrThrow()
      expect(row).toMatchObject({ status: 'failed', attempts: 3, last_error: '550 no such user' })
      expect(await sender.runOnce()).toEqual({ sent: 0, failed: 0 })
    } finally {
      await quiet.close()
    }
  })
})
