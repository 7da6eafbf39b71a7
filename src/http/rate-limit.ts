// The per-key rate limit (@fastify/rate-limit). Counted per process by default; with REDIS_URL, counted in Redis
// by the plugin's Redis store, so every API process shares one count per key. Redis trouble never stops the
// API: a check that Redis does not answer lets the request through (fail open), is counted in a metric and
// logged at most once per LOG_EVERY_MS.
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { FastifyRateLimitStore, RateLimitPluginOptions } from '@fastify/rate-limit'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { Redis } from 'ioredis'
import { AppError } from '../errors.js'
import type { HttpErrorCode } from './errors.js'

const LOG_EVERY_MS = 10_000
/** After a failure, checks skip Redis for this long (so a hung Redis costs one slow request per second, not all). */
const SKIP_AFTER_FAILURE_MS = 1_000
/** Longest a rate-limit check waits for Redis before the request goes through. */
const COMMAND_TIMEOUT_MS = 250
const KEY_PREFIX = 'canopy:rate-limit:'

export interface RateLimitSetup {
  options: RateLimitPluginOptions
  /** Resolves once Redis is connected, or after its connect timeout (the API starts either way). */
  ready(): Promise<void>
  close(): Promise<void>
}

export interface RateLimitSettings {
  perMinute: number
  redisUrl?: string | undefined
  log: FastifyBaseLogger
  /** Called for every check Redis did not answer. */
  onStoreError?: () => void
}

/** Per credential (the hash of the bearer token, never the token); requests without one share a bucket per client address. */
const keyOf = (request: FastifyRequest): string =>
  request.bearerTokenHash ? `k:${request.bearerTokenHash.toString('base64')}` : `ip:${request.ip}`

export async function rateLimitSetup(settings: RateLimitSettings): Promise<RateLimitSetup> {
  const options: RateLimitPluginOptions = {
    global: true,
    max: settings.perMinute,
    timeWindow: 60_000,
    keyGenerator: keyOf,
    errorResponseBuilder: () => new AppError<HttpErrorCode>('TOO_MANY_REQUESTS', 'too many requests, slow down'),
  }
  if (!settings.redisUrl) return { options, ready: async () => {}, close: async () => {} }

  let lastLogAt = -Infinity
  let unlogged = 0
  const logFailure = (error: unknown) => {
    const now = Date.now()
    if (now - lastLogAt < LOG_EVERY_MS) {
      unlogged++
      return
    }
    settings.log.warn(
      { err: { message: (error as Error)?.message ?? String(error) }, suppressedSinceLastLog: unlogged },
      'rate-limit store (Redis) is failing: requests are served without the shared limit',
    )
    lastLogAt = now
    unlogged = 0
  }
  const failed = (error: unknown) => {
    settings.onStoreError?.()
    logFailure(error)
  }

  // Loaded only with REDIS_URL: a process without Redis never holds the client's code (docs/benchmarks.md, "What a
  // process holds from its start").
  const { Redis: RedisClient } = await import('ioredis')
  const redis: Redis = new RedisClient(settings.redisUrl, {
    connectionName: 'canopy-api',
    connectTimeout: 1_000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    // Fail at once while disconnected rather than queueing the request behind a reconnect.
    enableOfflineQueue: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  })
  // Connection errors are logged like failed checks (at most once per LOG_EVERY_MS), never left unhandled.
  redis.on('error', logFailure)

  let skipUntil = 0
  const guard = (store: FastifyRateLimitStore): FastifyRateLimitStore => ({
    incr(key, callback, timeWindow, max) {
      if (Date.now() < skipUntil) {
        const error = new Error('skipped: Redis failed less than a second ago')
        failed(error)
        callback(error)
        return
      }
      store.incr(
        key,
        (error, result) => {
          if (error) {
            skipUntil = Date.now() + SKIP_AFTER_FAILURE_MS
            failed(error)
          }
          callback(error, result)
        },
        timeWindow,
        max,
      )
    },
    child: (routeOptions) => guard(store.child(routeOptions)),
  })
  const shared = guard(new RedisStore(false, false, redis, KEY_PREFIX))
  const Store = function SharedRedisStore() {
    return shared
  } as unknown as NonNullable<RateLimitPluginOptions['store']>

  return {
    options: { ...options, store: Store, skipOnError: true },
    ready: () =>
      new Promise<void>((resolve) => {
        if (redis.status === 'ready') return resolve()
        const timer = setTimeout(done, 1_500)
        function done() {
          clearTimeout(timer)
          redis.off('ready', done)
          resolve()
        }
        redis.once('ready', done)
      }),
    close: async () => {
      redis.disconnect()
    },
  }
}
