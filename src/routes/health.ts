import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { AppError } from '../errors.js'
import type { HttpErrorCode } from '../http/errors.js'
import type { DatabaseHandle } from '../db/connect.js'
import { unlimitedErrorResponses } from '../http/schemas/common.js'

const healthRoutes: FastifyPluginAsyncTypebox<{ database: DatabaseHandle }> = async (app, { database }) => {
  const noRateLimit = { rateLimit: false }
  app.get(
    '/healthz',
    {
      config: noRateLimit,
      schema: {
        tags: ['health'],
        summary: 'Liveness',
        response: { 200: Type.Object({ status: Type.Literal('ok') }), ...unlimitedErrorResponses() },
      },
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
        response: { 200: Type.Object({ status: Type.Literal('ready'), database: Type.String() }), ...unlimitedErrorResponses() },
      },
    },
    async () => {
      try {
        await sql`SELECT 1`.execute(database.db)
      } catch {
        throw new AppError<HttpErrorCode>('SERVICE_UNAVAILABLE', 'database is unavailable')
      }
      return { status: 'ready' as const, database: database.backend }
    },
  )
}

export default healthRoutes
