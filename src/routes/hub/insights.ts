// Reads only the Hub's pages need, under /hub/api behind the session (src/routes/hub/api.ts): the localised
// equivalents of the dashboard's tonnes, and a record's detail — the allocation with its reversal, and the webhook
// deliveries of its events. They are not part of the public API (an API key never reaches them).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../http/auth.js'
import { presentAllocationDelivery } from '../../http/presenters/hub-insights.js'
import { presentImpactRecord } from '../../http/presenters/reconciliation.js'
import { errorResponses, IdParamsSchema } from '../../http/schemas/common.js'
import {
  AllocationDeliveriesSchema,
  AllocationRecordsSchema,
  EquivalentsQuerySchema,
  EquivalentsSchema,
} from '../../http/schemas/hub-insights.js'
import { deliveriesOfAllocation, equivalentsOfTonnes, recordsOfAllocation } from '../../services/allocation-activity.js'
import type { ReconciliationDeps } from '../../services/reconciliation.js'

const common = { tags: ['hub'] }

const hubInsightRoutes: FastifyPluginAsyncTypebox<{ deps: ReconciliationDeps }> = async (app, { deps }) => {
  app.get(
    '/equivalents',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Localised everyday equivalents of tonnes of CO₂e (as a quote describes its footprint)',
        querystring: EquivalentsQuerySchema,
        response: { 200: EquivalentsSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'PERMISSION_DENIED') },
      },
    },
    async (request) => equivalentsOfTonnes(request.query.tonnes, request.query.locale),
  )

  app.get(
    '/funds/allocations/:id/records',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: "An allocation's impact record and, when it was reversed, its reversal's (by either id)",
        params: IdParamsSchema,
        response: { 200: AllocationRecordsSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'PERMISSION_DENIED', 'NOT_FOUND') },
      },
    },
    async (request) => ({ data: (await recordsOfAllocation(deps, principalOf(request), request.params.id)).map(presentImpactRecord) }),
  )

  app.get(
    '/funds/allocations/:id/webhook-deliveries',
    {
      config: { permission: 'webhooks:read' },
      schema: {
        ...common,
        summary: "The webhook deliveries of an allocation's events, to the endpoints of the caller's tree",
        params: IdParamsSchema,
        response: {
          200: AllocationDeliveriesSchema,
          ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'PERMISSION_DENIED', 'NOT_FOUND'),
        },
      },
    },
    async (request) => ({
      data: (await deliveriesOfAllocation(deps, principalOf(request), request.params.id)).map(presentAllocationDelivery),
    }),
  )
}

export default hubInsightRoutes
