import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentStatement, statementCsv } from '../http/presenters/statements.js'
import { bearerSecurity, errorResponses } from '../http/schemas/common.js'
import { StatementQuerySchema, StatementSchema } from '../http/schemas/statements.js'
import { getStatement, type StatementDeps } from '../services/statements.js'

/** CSV when the client asks for it (and prefers it to JSON), JSON otherwise. */
const wantsCsv = (accept: string | undefined): boolean => /\btext\/csv\b/i.test(accept ?? '') && !/application\/json/i.test(accept ?? '')

const statementRoutes: FastifyPluginAsyncTypebox<{ deps: StatementDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))

  app.get(
    '/statements',
    {
      config: { permission: 'impact:read' },
      schema: {
        tags: ['reconciliation'],
        security: bearerSecurity,
        summary: "An organisation's monthly statement: collected, owed onward, fee and profit share, per currency",
        description:
          'Per currency: what the organisation collected (the allocations its API key made, less their reversals) split into ' +
          'impact, its tax, the service fee and its tax; the profit share it earned and the tax on it; and how each settles ' +
          "under the settlement model each record locked. Equal to the sums of the month's impact and profit-share records. " +
          'JSON, or CSV with `Accept: text/csv`.',
        querystring: StatementQuerySchema,
        produces: ['application/json', 'text/csv'],
        response: {
          200: {
            description: 'The statement',
            content: { 'application/json': { schema: StatementSchema }, 'text/csv': { schema: { type: 'string' } } },
          },
          ...errorResponses('BAD_REQUEST', 'PERIOD_IN_FUTURE', 'UNAUTHORIZED', 'FORBIDDEN'),
        },
      },
    },
    async (request, reply) => {
      const statement = await getStatement(deps, principalOf(request), request.query)
      if (wantsCsv(request.headers.accept)) {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="statement-${statement.period}.csv"`)
          .send(statementCsv(statement))
      }
      return reply.type('application/json; charset=utf-8').send(presentStatement(statement))
    },
  )
}

export default statementRoutes
