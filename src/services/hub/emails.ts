// Hub e-mails (invitations) leave through the hub_emails outbox, like tax receipts (src/services/tax-receipts.ts):
// written in the invitation's own transaction, sent by SMTP with retries and backoff, the body emptied once sent.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { claimDueHubEmails, markHubEmailFailed, markHubEmailSent } from '../../db/repositories/users.js'
import type { SendMail } from '../tax-receipts.js'

export class HubEmailSender {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<unknown> | undefined
  private stopped = true

  constructor(
    private readonly db: Kysely<Database>,
    private readonly send: SendMail,
    private readonly options: { from: string; pollIntervalMs: number; now: () => Date; log: FastifyBaseLogger; maxAttempts?: number },
  ) {}

  async runOnce(): Promise<{ sent: number; failed: number }> {
    const now = this.options.now()
    const due = await claimDueHubEmails(this.db, now, new Date(now.getTime() + 60_000), 10)
    let sent = 0
    let failed = 0
    for (const email of due) {
      try {
        await this.send({ from: this.options.from, to: email.to, subject: email.subject, text: email.body })
        await markHubEmailSent(this.db, email.id, this.options.now())
        sent++
      } catch (error) {
        failed++
        const giveUp = email.attempts >= (this.options.maxAttempts ?? 10)
        const message = error instanceof Error ? error.message : String(error)
        this.options.log.warn({ emailId: email.id, attempts: email.attempts, giveUp, error: message }, 'hub e-mail not delivered')
        const delay = Math.min(this.options.pollIntervalMs * 2 ** Math.max(0, email.attempts - 1), 3_600_000)
        await markHubEmailFailed(
          this.db,
          email.id,
          message,
          giveUp ? { giveUp: true } : { retryAt: new Date(this.options.now().getTime() + delay) },
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
        .catch((error: unknown) => this.options.log.error({ err: error }, 'hub e-mail sender failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.pollIntervalMs)
        })
    }
    this.timer = setTimeout(tick, this.options.pollIntervalMs)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running
  }
}
