import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { AppError } from '../errors.js'
import { errorResponses } from '../http/schemas.js'
import type { RouteOptions } from './plugin-options.js'

const healthRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const noRateLimit = { rateLimit: false }
  app.get(
    '/healthz',
    {
      config: noRateLimit,
      schema: { tags: ['health'], summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/readyz',
    {
      config: noRateLimit,
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database answers',
        response: { 200: Type.Object({ status: Type.Literal('ready'), database: Type.String() }), ...errorResponses(503) },
      },
    },
    async () => {
      // Bounded on its own: a probe must answer within a second even when every pooled connection is
      // stuck. The abandoned check still ends within the pool's own bounds.
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), ctx.config.READINESS_TIMEOUT_MS)
      })
      const answered = sql`SELECT 1`.execute(ctx.database.db).then(
        () => true,
        () => false,
      )
      const ready = await Promise.race([answered, timedOut]).finally(() => clearTimeout(timer))
      if (!ready) throw new AppError('SERVICE_UNAVAILABLE', 'database is unavailable')
      return { status: 'ready' as const, database: ctx.database.backend }
    },
  )
}

export default healthRoutes
