// Types for @fastify/rate-limit's own Redis store (store/RedisStore.js), which the package does not declare.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'

  interface RedisStoreCtor {
    new (continueExceeding: boolean, exponentialBackoff: boolean, redis: unknown, key?: string): FastifyRateLimitStore
  }
  const RedisStore: RedisStoreCtor
  export default RedisStore
}
