// Donation tax receipts: queued in the allocation's own write (the outbox), delivered here by SMTP with
// retries and exponential backoff. Runs in every API process when SMTP_URL is set.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Transporter } from 'nodemailer'
import type { Database, TaxReceiptPayload } from '../db/database.js'
import { isDatabaseUnavailable } from '../db/failures.js'
import { claimDueReceipts, markReceiptFailedAttempt, markReceiptSent } from '../db/repositories/tax-receipts.js'

export interface ReceiptMessage {
  /** Overrides the sender's From address (Hub e-mails have their own). */
  from?: string
  to: string
  subject: string
  text: string
}

export type SendMail = (message: ReceiptMessage) => Promise<void>

export function smtpSender(smtpUrl: string, from: string): { send: SendMail; close: () => void } {
  // The mailer's code is loaded with the first message, not at start: most processes never send one.
  let transport: Promise<Transporter> | undefined
  const open = () => (transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl)))
  return {
    send: async (message) => {
      await (await open()).sendMail({ from, ...message })
    },
    // A transport that never opened (its first message failed to create it) has nothing to close.
    close: () =>
      void transport?.then(
        (opened) => opened.close(),
        () => {},
      ),
  }
}

/** The receipt: what was contributed, to whom, and that it may be tax deductible. */
export function renderReceipt(payload: TaxReceiptPayload): { subject: string; text: string } {
  const money = (amount: string) => `${payload.currencyCode} ${amount}`
  return {
    subject: `Your contribution receipt from ${payload.organisationName}`,
    text: [
      'Thank you for your contribution.',
      '',
      `Made through: ${payload.organisationName}`,
      `Date: ${payload.allocatedAt.slice(0, 10)}`,
      `Reference: ${payload.fundsAllocationId}`,
      `Amount paid: ${money(payload.totalPaid)}`,
      '',
      'Your contribution supports:',
      ...payload.contributions.map((c) => `  - ${c.impactPartnerName}: ${money(c.impactAmount)}`),
      '',
      'The amount paid includes a service fee and any applicable tax on it. Contributions are granted to the',
      'impact partners listed above. Your contribution may be tax deductible: please keep this receipt for',
      'your records and check with a tax adviser.',
    ].join('\n'),
  }
}

export interface ReceiptSenderOptions {
  pollIntervalMs: number
  now: () => Date
  log: FastifyBaseLogger
  maxAttempts?: number
  batchSize?: number
  leaseMs?: number
}

export class TaxReceiptSender {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<unknown> | undefined
  private stopped = true

  constructor(
    private readonly db: Kysely<Database>,
    private readonly send: SendMail,
    private readonly options: ReceiptSenderOptions,
  ) {}

  /** Backoff after the n-th failed attempt: poll interval × 2^(n−1), at most an hour. */
  retryDelayMs(attempts: number): number {
    return Math.min(this.options.pollIntervalMs * 2 ** Math.max(0, attempts - 1), 3_600_000)
  }

  /** Delivers the receipts that are due now; returns how many were sent and how many failed. */
  async runOnce(): Promise<{ sent: number; failed: number }> {
    const now = this.options.now()
    const due = await claimDueReceipts(
      this.db,
      now,
      new Date(now.getTime() + (this.options.leaseMs ?? 60_000)),
      this.options.batchSize ?? 10,
    )
    let sent = 0
    let failed = 0
    for (const receipt of due) {
      try {
        await this.send({ to: receipt.consumerEmail, ...renderReceipt(receipt.payload) })
        await markReceiptSent(this.db, receipt.id, this.options.now())
        sent++
      } catch (error) {
        failed++
        const giveUp = receipt.attempts >= (this.options.maxAttempts ?? 10)
        const message = error instanceof Error ? error.message : String(error)
        this.options.log.warn({ receiptId: receipt.id, attempts: receipt.attempts, giveUp, error: message }, 'tax receipt not delivered')
        await markReceiptFailedAttempt(
          this.db,
          receipt.id,
          message,
          giveUp ? { giveUp: true } : { retryAt: new Date(this.options.now().getTime() + this.retryDelayMs(receipt.attempts)) },
        )
      }
    }
    return { sent, failed }
  }

  start(): void {
    this.stopped = false
    const tick = () => {
      if (this.stopped) return
      this.running = this.runOnce()
        .catch((error: unknown) => {
          // A database out of reach (a failover) is retried at the next poll: a warning; anything else is a bug.
          if (isDatabaseUnavailable(error))
            this.options.log.warn({ err: error }, 'tax receipt sender: the database is unavailable; retrying')
          else this.options.log.error({ err: error }, 'tax receipt sender failed')
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.pollIntervalMs)
        })
    }
    this.timer = setTimeout(tick, this.options.pollIntervalMs)
  }

  /** Stops polling and waits for a delivery round in progress. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running
  }
}
