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
      try {
        await sql`SELECT 1`.execute(ctx.database.db)
      } catch {
        throw new AppError('SERVICE_UNAVAILABLE', 'database is unavailable')
      }
      return { status: 'ready' as const, database: ctx.database.backend }
    },
  )
}

export default healthRoutes
