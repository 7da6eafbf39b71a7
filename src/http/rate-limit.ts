// The per-key rate limit: a fixed window per credential, counted by @fastify/rate-limit's stores. Per process by
// default (its LocalStore); with REDIS_URL, in Redis (its RedisStore), so every API process shares one count per key.
// Redis trouble never stops the API: a check that Redis does not answer lets the request through (fail open), is
// counted in a metric and logged at most once per LOG_EVERY_MS. The hook is this module's, not the plugin's: the same
// headers, answers and stores, as one callback per request instead of the plugin's three awaited promises
// (docs/write-costs.md, "The rate limit as a callback").
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
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
const WINDOW_MS = 60_000
/** Keys the per-process count keeps (least recently used out first): the plugin's default. */
const LOCAL_KEYS_MAX = 5_000

export interface RateLimitSetup {
  /** Adds the limit to every route registered after it, bar those whose config says `rateLimit: false`. */
  install(app: FastifyInstance): void
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
const keyOf = (request: FastifyRequest): string => (request.bearerTokenHash ? `k:${request.bearerTokenHash}` : `ip:${request.ip}`)

/**
 * The onRequest hook of a limit of `max` requests per WINDOW_MS per key: x-ratelimit-limit, -remaining and -reset
 * on every answer, and past the limit 429 TOO_MANY_REQUESTS with Retry-After. A store that fails lets the request
 * through (the Redis store's guard below has counted and logged it).
 */
function limitHook(store: FastifyRateLimitStore, max: number): onRequestHookHandler {
  return function rateLimit(request, reply, done) {
    store.incr(
      keyOf(request),
      (error, result) => {
        if (error || result === undefined) return done()
        const reset = Math.ceil(result.ttl / 1000)
        reply.header('x-ratelimit-limit', max)
        reply.header('x-ratelimit-remaining', Math.max(0, max - result.current))
        reply.header('x-ratelimit-reset', reset)
        if (result.current <= max) return done()
        reply.header('retry-after', reset)
        done(new AppError<HttpErrorCode>('TOO_MANY_REQUESTS', 'too many requests, slow down'))
      },
      WINDOW_MS,
      max,
    )
  }
}

function installer(store: FastifyRateLimitStore, max: number): (app: FastifyInstance) => void {
  const hook = limitHook(store, max)
  return (app) => {
    app.addHook('onRoute', (route) => {
      const own = route.config?.rateLimit
      if (own === false) return
      if (own !== undefined)
        throw new Error(`${route.method} ${route.url}: a route's rateLimit may only be false (one limit for every route)`)
      // After the route's own hooks (as the plugin did: a request is authenticated before it is counted).
      route.onRequest =
        route.onRequest === undefined ? [hook] : [...(Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]), hook]
    })
  }
}

export async function rateLimitSetup(settings: RateLimitSettings): Promise<RateLimitSetup> {
  const max = settings.perMinute
  if (!settings.redisUrl) {
    return { install: installer(new LocalStore(false, false, LOCAL_KEYS_MAX), max), ready: async () => {}, close: async () => {} }
  }

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

  return {
    install: installer(shared, max),
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
