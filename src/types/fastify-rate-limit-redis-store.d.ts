// Types for @fastify/rate-limit's own stores (store/RedisStore.js, store/LocalStore.js), which the package does not declare.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'

  interface RedisStoreCtor {
    new (continueExceeding: boolean, exponentialBackoff: boolean, redis: unknown, key?: string): FastifyRateLimitStore
  }
  const RedisStore: RedisStoreCtor
  export default RedisStore
}

// And for its per-process store (store/LocalStore.js): a fixed window per key in an LRU map of `cache` keys.
declare module '@fastify/rate-limit/store/LocalStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'

  interface LocalStoreCtor {
    new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number): FastifyRateLimitStore
  }
  const LocalStore: LocalStoreCtor
  export default LocalStore
}
