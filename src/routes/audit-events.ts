import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentAuditEvent } from '../http/presenters/audit-events.js'
import { AuditEventListQuerySchema, AuditEventListSchema } from '../http/schemas/audit-events.js'
import { bearerSecurity, errorResponses } from '../http/schemas/common.js'
import { listAuditEvents, type AuditDeps } from '../services/audit.js'

const auditEventRoutes: FastifyPluginAsyncTypebox<{ deps: AuditDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))

  app.get(
    '/audit-events',
    {
      config: { permission: 'auditEvents:read' },
      schema: {
        tags: ['audit log'],
        security: bearerSecurity,
        summary: "The audit log of the caller's tree",
        description:
          'Who changed keys, webhooks, allowed origins, the IP allowlist, users and organisations, and who signed in to the Hub ' +
          '(or failed to), newest first. Keyset pages: pass the last event id as `startingAfter` for the next (older) page. ' +
          'The log is append-only: nothing, the database owner included, can change or delete an event.',
        querystring: AuditEventListQuerySchema,
        response: {
          200: AuditEventListSchema,
          ...errorResponses('BAD_REQUEST', 'INVALID_DATE_RANGE', 'INVALID_CURSOR', 'UNAUTHORIZED', 'FORBIDDEN', 'PERMISSION_DENIED'),
        },
      },
    },
    async (request) => {
      const { limit, ...query } = request.query
      const page = await listAuditEvents(deps, principalOf(request), { ...query, limit: limit === undefined ? 20 : Number(limit) })
      return { hasMore: page.hasMore, data: page.data.map(presentAuditEvent) }
    },
  )
}

export default auditEventRoutes
