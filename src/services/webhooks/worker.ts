// The webhook worker: runs in every API process, claims due deliveries (SKIP LOCKED, with a lease), makes the HTTP
// calls outside any transaction and records each attempt. A commit in this process wakes it; otherwise it polls.
// Delivery is at least once and in best-effort order (docs/webhooks.md).
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/database.js'
import { isDatabaseUnavailable } from '../../db/failures.js'
import type { WebhookAttempt } from '../../db/repositories/webhooks.js'
import {
  claimDueDeliveries,
  disableEndpoint,
  insertAttempt,
  markEndpointFailing,
  markEndpointHealthy,
  recordSuccesses,
  releaseDeliveries,
  settleDelivery,
  type ClaimedDelivery,
} from '../../db/repositories/webhooks.js'
import { DISABLE_AFTER_FAILING_MS, outcomeOfStatus, parseRetryAfter, retryDelayMs } from '../../domain/webhooks.js'
import { newId } from '../../ids.js'
import type { Metrics } from '../../metrics.js'
import type { PostWebhook, WebhookResponse } from './http-client.js'
import { withRenderedBodies } from './events.js'
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

/** Claims are at least this far apart unless the last one filled every free slot: commits arrive in bursts. */
const MIN_CLAIM_INTERVAL_MS = 100
/** Successes are recorded together, at most this long after they happen (or once this many wait). */
const SUCCESS_FLUSH_MS = 50
const SUCCESS_FLUSH_SIZE = 100
/** Claimed deliveries wait locally for at most this many rounds of `concurrency`. */
const QUEUE_ROUNDS = 8
/**
 * How long stop() waits for a claim in flight. Not longer: on a frozen link the claim would hold shutdown for its
 * whole query bound. What a claim returns after that is never started and comes due again when its lease ends.
 */
const STOP_CLAIM_WAIT_MS = 500

interface Success {
  deliveryId: string
  endpointId: string
  attempt: WebhookAttempt
}

/** What an attempt did, as the worker reports it (metrics label). */
export type AttemptResult = 'succeeded' | 'failed' | 'gone' | 'error'

export class WebhookWorker {
  private stopped = true
  private loop: Promise<void> | undefined
  private readonly inFlight = new Set<Promise<void>>()
  private queue: ClaimedDelivery[] = []
  private wakeUp: (() => void) | undefined
  private woken = false
  private successes: Success[] = []
  private flushTimer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()
  /** Claims failing in a row because the database is unavailable, and since when (logged once per outage). */
  private outage: { since: number; failures: number } | undefined

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
    await Promise.race([this.loop, delay(STOP_CLAIM_WAIT_MS, undefined, { ref: false })])
    // Claimed but not started: give them back now rather than when their lease ends.
    const unstarted = this.queue.splice(0)
    await releaseDeliveries(
      this.options.db,
      unstarted.map((d) => d.id),
    ).catch((error: unknown) => this.options.log.warn({ err: error }, 'webhook deliveries could not be released'))
    await Promise.allSettled([...this.inFlight])
    await this.flush()
  }

  /** Claims what is due now (up to the free slots) and delivers it; resolves when those deliveries are recorded. */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.options.concurrency)
    await Promise.all(claimed.map((d) => this.deliver(d)))
    await this.flush()
    return claimed.length
  }

  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = this.options.clock()
    const claimed = await claimDueDeliveries(this.options.db, now, new Date(now.getTime() + this.options.leaseMs), limit)
    return withRenderedBodies(this.options.db, claimed)
  }

  /** Starts queued deliveries while fewer than `concurrency` are in flight. */
  private pump(): void {
    while (this.inFlight.size < this.options.concurrency && this.queue.length > 0) {
      const delivery = this.queue.shift() as ClaimedDelivery
      const done: Promise<void> = this.deliver(delivery).finally(() => {
        this.inFlight.delete(done)
        this.pump()
        if (this.queue.length < this.options.concurrency) this.wake()
      })
      this.inFlight.add(done)
    }
  }

  private async run(): Promise<void> {
    let full = false
    let lastClaim = 0
    // Claimed but not yet started: at most a few rounds of work, well within the lease.
    const capacity = () => this.options.concurrency * QUEUE_ROUNDS - this.inFlight.size - this.queue.length
    while (!this.stopped) {
      const early = lastClaim + MIN_CLAIM_INTERVAL_MS - Date.now()
      if (capacity() > 0 && !full && early > 0) await new Promise((resolve) => setTimeout(resolve, early))
      full = false
      const room = capacity()
      if (room > 0 && !this.stopped) {
        this.woken = false
        lastClaim = Date.now()
        try {
          const claimed = await this.claim(room)
          this.claimed()
          this.queue.push(...claimed)
          // Stopped meanwhile: stop() gives back what is queued (or, if it no longer waits, the leases do).
          if (this.stopped) break
          this.pump()
          full = claimed.length === room
        } catch (error) {
          this.claimFailed(error)
        }
      }
      if (this.stopped) break
      // More may be due at once; otherwise wait for a wake-up (a commit, a free slot) or the next poll.
      if ((full || this.woken) && capacity() > 0) continue
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

  /**
   * A database out of reach (a failover, a restart) is routine, and the next poll retries: one warning when it
   * starts, as the request path logs its 503s, and one line when claims work again. Anything else is a bug: an error,
   * every time.
   */
  private claimFailed(error: unknown): void {
    const { log } = this.options
    if (!isDatabaseUnavailable(error)) {
      log.error({ err: error }, 'webhook worker could not claim deliveries')
      return
    }
    if (this.outage) {
      this.outage.failures++
      log.debug({ err: error, failures: this.outage.failures }, 'webhook worker: the database is still unavailable')
      return
    }
    this.outage = { since: Date.now(), failures: 1 }
    log.warn({ err: error }, 'webhook worker could not claim deliveries: the database is unavailable; retrying at every poll')
  }

  private claimed(): void {
    if (!this.outage) return
    const { since, failures } = this.outage
    this.outage = undefined
    this.options.log.info({ failures, unavailableMs: Date.now() - since }, 'webhook worker: the database is available again')
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
    const { clock, metrics } = this.options
    const { body } = delivery
    if (body === null) return this.unrenderable(delivery)
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
    metrics.webhookAttempt(result)
    const attempt: WebhookAttempt = {
      id: newId(),
      attemptedAt,
      durationMs,
      statusCode: response?.statusCode ?? null,
      error,
      responseBody: response?.body ?? null,
    }
    if (outcome.kind === 'succeeded') return this.recordSuccess({ deliveryId: delivery.id, endpointId: delivery.endpointId, attempt })
    await this.record(delivery, attempt, response)
  }

  /**
   * An event whose record cannot be read (never expected: the ledger is never deleted) cannot be sent: the delivery
   * fails for good with the reason in its attempt, rather than retrying for days and disabling a healthy endpoint.
   */
  private async unrenderable(delivery: ClaimedDelivery): Promise<void> {
    const { db, clock, log, metrics } = this.options
    const now = clock()
    metrics.webhookAttempt('error')
    log.error({ deliveryId: delivery.id, eventId: delivery.eventId }, 'webhook event could not be rendered: its record was not found')
    const attempt: WebhookAttempt = {
      id: newId(),
      attemptedAt: now,
      durationMs: 0,
      statusCode: null,
      error: 'the event could not be rendered: its record was not found',
      responseBody: null,
    }
    await db
      .transaction()
      .execute(async (trx) => {
        await insertAttempt(trx, delivery.id, attempt)
        await settleDelivery(trx, delivery.id, now, { status: 'failed' })
      })
      .catch((e: unknown) => log.warn({ err: e, deliveryId: delivery.id }, 'webhook attempt could not be recorded'))
  }

  /** Successes wait a moment to be recorded together (one statement for many). */
  private recordSuccess(success: Success): void {
    this.successes.push(success)
    if (this.successes.length >= SUCCESS_FLUSH_SIZE) void this.flush()
    else this.flushTimer ??= setTimeout(() => void this.flush(), SUCCESS_FLUSH_MS)
  }

  /** Records the successes waiting; resolves when they (and any flush before) are recorded. */
  flush(): Promise<void> {
    clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    const batch = this.successes
    this.successes = []
    this.flushing = this.flushing.then(async () => {
      if (batch.length === 0) return
      try {
        await recordSuccesses(this.options.db, batch)
      } catch (error) {
        // One bad item (say, an endpoint deleted meanwhile) must not lose the others: one by one.
        this.options.log.warn({ err: error, count: batch.length }, 'webhook successes could not be recorded together')
        for (const s of batch)
          await this.record({ id: s.deliveryId, endpointId: s.endpointId, manual: false, attempt: 0 }, s.attempt, undefined, true)
      }
    })
    return this.flushing
  }

  /** An attempt and what follows from it, in one transaction. */
  private async record(
    delivery: Pick<ClaimedDelivery, 'id' | 'endpointId' | 'manual' | 'attempt'>,
    attempt: WebhookAttempt,
    response: WebhookResponse | undefined,
    succeeded = false,
  ): Promise<void> {
    const { db, clock, log } = this.options
    const outcome = succeeded ? ({ kind: 'succeeded' } as const) : outcomeOfStatus(response?.statusCode)
    try {
      await db.transaction().execute(async (trx) => {
        const now = clock()
        await insertAttempt(trx, delivery.id, attempt)
        if (outcome.kind === 'succeeded') {
          // Only when recording it with others failed: see recordSuccess.
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
