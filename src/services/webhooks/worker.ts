// The webhook worker: runs in every API process, claims due deliveries (SKIP LOCKED, with a lease), makes the HTTP
// calls outside any transaction and records each attempt. A commit in this process wakes it; otherwise it polls.
// Delivery is at least once and in best-effort order (docs/webhooks.md).
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/database.js'
import {
  claimDueDeliveries,
  disableEndpoint,
  insertAttempt,
  markEndpointFailing,
  markEndpointHealthy,
  settleDelivery,
  type ClaimedDelivery,
} from '../../db/repositories/webhooks.js'
import { DISABLE_AFTER_FAILING_MS, outcomeOfStatus, parseRetryAfter, retryDelayMs } from '../../domain/webhooks.js'
import { newId } from '../../ids.js'
import type { Metrics } from '../../metrics.js'
import type { PostWebhook, WebhookResponse } from './http-client.js'
import { ekkoSignature, standardSignature } from './signing.js'

export interface WebhookWorkerOptions {
  db: Kysely<Database>
  post: PostWebhook
  /** Schedules retries and measures the failing streak. */
  clock: Clock
  /** webhook-timestamp: receivers compare it with their own clock, so it is always the wall clock. */
  wallClock: Clock
  random: () => number
  schedule: readonly number[]
  leaseMs: number
  pollIntervalMs: number
  concurrency: number
  log: FastifyBaseLogger
  metrics: Metrics
}

/** What an attempt did, as the worker reports it (metrics label). */
export type AttemptResult = 'succeeded' | 'failed' | 'gone' | 'error'

export class WebhookWorker {
  private stopped = true
  private loop: Promise<void> | undefined
  private readonly inFlight = new Set<Promise<void>>()
  private wakeUp: (() => void) | undefined
  private woken = false

  constructor(private readonly options: WebhookWorkerOptions) {}

  /** Something became due (a commit in this process): look now rather than at the next poll. */
  wake(): void {
    this.woken = true
    this.wakeUp?.()
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.loop = this.run()
  }

  /** Stops claiming, then waits for the deliveries in flight to finish (each is bounded by the client's timeout). */
  async stop(): Promise<void> {
    this.stopped = true
    this.wakeUp?.()
    await this.loop
    await Promise.allSettled([...this.inFlight])
  }

  /** Claims what is due now (up to the free slots) and delivers it; resolves when those deliveries are recorded. */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.options.concurrency)
    await Promise.all(claimed.map((d) => this.deliver(d)))
    return claimed.length
  }

  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = this.options.clock()
    return claimDueDeliveries(this.options.db, now, new Date(now.getTime() + this.options.leaseMs), limit)
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let full = false
      const free = this.options.concurrency - this.inFlight.size
      if (free > 0) {
        this.woken = false
        try {
          const claimed = await this.claim(free)
          for (const delivery of claimed) {
            const done: Promise<void> = this.deliver(delivery).finally(() => {
              this.inFlight.delete(done)
              this.wake()
            })
            this.inFlight.add(done)
          }
          full = claimed.length === free
        } catch (error) {
          this.options.log.error({ err: error }, 'webhook worker could not claim deliveries')
        }
      }
      if (this.stopped) break
      // More may be due at once; otherwise wait for a wake-up (a commit, a free slot) or the next poll.
      if (full || this.woken) {
        if (this.inFlight.size < this.options.concurrency) continue
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollIntervalMs)
        this.wakeUp = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wakeUp = undefined
    }
  }

  private headersFor(delivery: ClaimedDelivery, body: string): Record<string, string> {
    const timestamp = Math.floor(this.options.wallClock().getTime() / 1000)
    return {
      'content-type': 'application/json',
      'user-agent': 'Canopy-Webhooks/1.0',
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardSignature(delivery.secrets, delivery.eventId, timestamp, body),
      ...(delivery.format === 'ekko' ? { signature: ekkoSignature(body, delivery.organisationId) } : {}),
    }
  }

  /** One attempt: the HTTP call (no transaction open), then its record and what follows, in one transaction. */
  async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { db, clock, log, metrics } = this.options
    const body = delivery.format === 'ekko' && delivery.ekkoBody !== null ? delivery.ekkoBody : delivery.body
    const attemptedAt = clock()
    const started = performance.now()
    let response: WebhookResponse | undefined
    let error: string | null = null
    try {
      response = await this.options.post(delivery.url, this.headersFor(delivery, body), body)
    } catch (e) {
      error = describe(e)
    }
    const durationMs = Math.round(performance.now() - started)
    const outcome = outcomeOfStatus(response?.statusCode)
    const result: AttemptResult = response === undefined ? 'error' : outcome.kind
    try {
      await db.transaction().execute(async (trx) => {
        const now = clock()
        await insertAttempt(trx, delivery.id, {
          id: newId(),
          attemptedAt,
          durationMs,
          statusCode: response?.statusCode ?? null,
          error,
          responseBody: response?.body ?? null,
        })
        if (outcome.kind === 'succeeded') {
          await settleDelivery(trx, delivery.id, now, { status: 'succeeded' })
          await markEndpointHealthy(trx, delivery.endpointId)
          return
        }
        if (outcome.kind === 'gone') {
          await settleDelivery(trx, delivery.id, now, { status: 'failed' })
          await disableEndpoint(trx, delivery.endpointId, 'the endpoint answered 410 Gone', now)
          log.warn({ endpointId: delivery.endpointId }, 'webhook endpoint answered 410 Gone: disabled')
          return
        }
        const failingSince = await markEndpointFailing(trx, delivery.endpointId, now)
        if (failingSince && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_MS) {
          await settleDelivery(trx, delivery.id, now, { status: 'failed' })
          await disableEndpoint(trx, delivery.endpointId, 'every delivery failed for 5 days', now)
          log.warn({ endpointId: delivery.endpointId, failingSince }, 'webhook endpoint failed for 5 days: disabled')
          return
        }
        const delay = delivery.manual
          ? undefined
          : retryDelayMs({
              attempts: delivery.attempt,
              schedule: this.options.schedule,
              random: this.options.random(),
              retryAfterMs: parseRetryAfter(response?.retryAfter, now),
            })
        await settleDelivery(
          trx,
          delivery.id,
          now,
          delay === undefined ? { status: 'failed' } : { status: 'pending', retryAt: new Date(now.getTime() + delay) },
        )
      })
    } catch (e) {
      // The endpoint may have been deleted meanwhile; otherwise the lease expires and the attempt is made again.
      log.warn({ err: e, deliveryId: delivery.id }, 'webhook attempt could not be recorded')
    }
    metrics.webhookAttempt(result)
  }
}

/** An error as an attempt's record: its code and message, never a stack. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error).slice(0, 500)
  const code = (error as { code?: unknown }).code
  const cause = (error as { cause?: unknown }).cause
  const base = typeof code === 'string' ? `${code}: ${error.message}` : error.message || error.name
  return (cause instanceof Error && !base.includes(cause.message) ? `${base} (${cause.message})` : base).slice(0, 500)
}
