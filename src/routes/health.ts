import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { AppError } from '../errors.js'
import type { HttpErrorCode } from '../http/errors.js'
import type { DatabaseHandle } from '../db/connect.js'
import { unlimitedErrorResponses } from '../http/schemas/common.js'

const healthRoutes: FastifyPluginAsyncTypebox<{ database: DatabaseHandle; readinessTimeoutMs: number }> = async (
  app,
  { database, readinessTimeoutMs },
) => {
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
      // Bounded on its own: a probe must answer within a second even when every pooled connection is
      // stuck. The abandoned check still ends within the pool's own bounds.
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), readinessTimeoutMs)
      })
      const answered = sql`SELECT 1`.execute(database.db).then(
        () => true,
        () => false,
      )
      const ready = await Promise.race([answered, timedOut]).finally(() => clearTimeout(timer))
      if (!ready) throw new AppError<HttpErrorCode>('SERVICE_UNAVAILABLE', 'database is unavailable')
      return { status: 'ready' as const, database: database.backend }
    },
  )
}

export default healthRoutes
