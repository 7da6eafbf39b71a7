import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentSummary } from '../http/presenters/summary.js'
import { bearerSecurity, errorResponses } from '../http/schemas/common.js'
import { AllocationSummarySchema, SummaryQuerySchema, toSummaryQuery } from '../http/schemas/summary.js'
import { summariseAllocations, type SummaryDeps } from '../services/summary.js'

const summaryRoutes: FastifyPluginAsyncTypebox<{ deps: SummaryDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))

  app.get(
    '/funds/allocations/summary',
    {
      config: { permission: 'impact:read' },
      schema: {
        tags: ['reconciliation'],
        security: bearerSecurity,
        summary:
          "Summarise the impact records of the key's tree: totals per currency, by time bucket, partner, project, organisation or currency",
        description:
          'The records of [dateTimeFrom, dateTimeTo) (the same records, window and tree rules as the reconciliation list), net of ' +
          'reversals (each at its own time), per currency and never summed across currencies. Time buckets are local days, ISO ' +
          'weeks or months in timeZone, every bucket of the window listed; other groupings list the keys that have records. By ' +
          "impact partner a credit line counts under its project's partner and a contribution line under its partner; by project " +
          'only credit lines count (contributions are made to partners).',
        querystring: SummaryQuerySchema,
        response: { 200: AllocationSummarySchema, ...errorResponses('BAD_REQUEST', 'INVALID_DATE_RANGE', 'UNAUTHORIZED', 'FORBIDDEN') },
      },
    },
    async (request) => presentSummary(await summariseAllocations(deps, principalOf(request), toSummaryQuery(request.query))),
  )
}

export default summaryRoutes
