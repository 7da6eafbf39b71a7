// Slowing repeated failed sign-ins, per account and per client address: counters in Redis when REDIS_URL is set
// (shared by every API process), else in the database. A counter only ever makes the next attempt wait (at most
// 15 minutes, src/domain/sign-in.ts), and is forgotten an hour after its last failure: the real user is never
// locked out for good.
import type { Kysely } from 'kysely'
import type { Redis } from 'ioredis'
import type { Database } from '../../db/database.js'
import { clearSignInFailures, findSignInFailures, recordSignInFailures } from '../../db/repositories/users.js'
import { ACCOUNT_THROTTLE, ADDRESS_THROTTLE, THROTTLE_WINDOW_MS, throttleDelayMs, type ThrottlePolicy } from '../../domain/sign-in.js'
import { sha256 } from './credentials.js'

export interface FailureCount {
  failures: number
  lastFailureAt: Date
}

export interface FailureStore {
  read(keys: readonly string[], now: Date): Promise<Map<string, FailureCount>>
  record(keys: readonly string[], now: Date): Promise<void>
  clear(key: string): Promise<void>
}

export const databaseFailureStore = (db: Kysely<Database>): FailureStore => ({
  async read(keys, now) {
    return new Map((await findSignInFailures(db, keys, now)).map((r) => [r.key, { failures: r.failures, lastFailureAt: r.lastFailureAt }]))
  },
  record: (keys, now) => recordSignInFailures(db, keys, now, new Date(now.getTime() + THROTTLE_WINDOW_MS)),
  clear: (key) => clearSignInFailures(db, key),
})

const REDIS_PREFIX = 'canopy:sign-in:'

/** Redis hashes {failures, last}: expiring an hour after the last failure (Redis' clock), read with the app's. */
export const redisFailureStore = (redis: Redis): FailureStore => ({
  async read(keys) {
    const out = new Map<string, FailureCount>()
    const replies = await Promise.all(keys.map((key) => redis.hgetall(REDIS_PREFIX + key)))
    keys.forEach((key, i) => {
      const reply = replies[i]
      if (reply?.failures && reply.last) out.set(key, { failures: Number(reply.failures), lastFailureAt: new Date(Number(reply.last)) })
    })
    return out
  },
  async record(keys, now) {
    const multi = redis.multi()
    for (const key of keys) {
      multi.hincrby(REDIS_PREFIX + key, 'failures', 1)
      multi.hset(REDIS_PREFIX + key, 'last', String(now.getTime()))
      multi.pexpire(REDIS_PREFIX + key, THROTTLE_WINDOW_MS)
    }
    await multi.exec()
  },
  async clear(key) {
    await redis.del(REDIS_PREFIX + key)
  },
})

/** A Redis store that falls back to the database while Redis fails (the throttle never fails open). */
export function withFallback(primary: FailureStore, fallback: FailureStore, onError: (error: unknown) => void): FailureStore {
  const guarded =
    <A extends unknown[], R>(fn: (store: FailureStore, ...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(primary, ...args)
      } catch (error) {
        onError(error)
        return fn(fallback, ...args)
      }
    }
  return {
    read: guarded((store, keys: readonly string[], now: Date) => store.read(keys, now)),
    record: guarded((store, keys: readonly string[], now: Date) => store.record(keys, now)),
    clear: guarded((store, key: string) => store.clear(key)),
  }
}

export interface ThrottleKeys {
  account: string
  address: string
}

/** The counters of a sign-in: the account (its e-mail, hashed: the same for a user who exists or not) and the address. */
export const throttleKeys = (email: string, ip: string): ThrottleKeys => ({
  account: `account:${sha256(email.toLowerCase()).toString('base64url')}`,
  address: `address:${ip}`,
})

export class SignInThrottle {
  constructor(private readonly store: FailureStore) {}

  /** Milliseconds the caller must still wait before another attempt (0: go ahead). */
  async waitMs(keys: ThrottleKeys, now: Date): Promise<number> {
    const counts = await this.store.read([keys.account, keys.address], now)
    const wait = (key: string, policy: ThrottlePolicy) => {
      const count = counts.get(key)
      if (!count) return 0
      return Math.max(0, count.lastFailureAt.getTime() + throttleDelayMs(count.failures, policy) - now.getTime())
    }
    return Math.max(wait(keys.account, ACCOUNT_THROTTLE), wait(keys.address, ADDRESS_THROTTLE))
  }

  recordFailure(keys: ThrottleKeys, now: Date): Promise<void> {
    return this.store.record([keys.account, keys.address], now)
  }

  /** A successful sign-in forgets the account's failures (not the address's). */
  recordSuccess(keys: ThrottleKeys): Promise<void> {
    return this.store.clear(keys.account)
  }
}
