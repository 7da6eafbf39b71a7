import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { profitShareCsvChunks } from '../http/presenters/profit-share-csv.js'
import { csvChunks } from '../http/presenters/reconciliation-csv.js'
import { presentImpactRecord, presentProfitShareRecord } from '../http/presenters/reconciliation.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import {
  ImpactRecordExportQuerySchema,
  ImpactRecordListQuerySchema,
  ImpactRecordListSchema,
  ImpactRecordSchema,
  ProfitShareRecordExportQuerySchema,
  ProfitShareRecordListQuerySchema,
  ProfitShareRecordListSchema,
  ProfitShareRecordSchema,
} from '../http/schemas/reconciliation.js'
import { exportProfitShareRecords, getProfitShareRecord, listProfitShareRecords } from '../services/profit-share.js'
import { exportImpactRecords, getImpactRecord, listImpactRecords, type ReconciliationDeps } from '../services/reconciliation.js'

const reconciliationRoutes: FastifyPluginAsyncTypebox<{ deps: ReconciliationDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['reconciliation'], security: bearerSecurity }
  const listErrors = errorResponses('BAD_REQUEST', 'INVALID_DATE_RANGE', 'UNAUTHORIZED', 'FORBIDDEN')

  app.get(
    '/funds/allocations/impact',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: "List the impact records of the key's tree (allocations and reversals)",
        description:
          'Records of the window [dateTimeFrom, dateTimeTo) in (fundsDateTime, id) order, oldest first; a reversal is a record ' +
          'of its own at its own time (`reversal: true`, `reversalId`, negated amounts). Keyset pages: pass the last record id ' +
          '(`reversalId` for a reversal) as `startingAfter` for the next page, the first as `endingBefore` for the previous one.',
        querystring: ImpactRecordListQuerySchema,
        response: {
          200: ImpactRecordListSchema,
          ...errorResponses('BAD_REQUEST', 'INVALID_DATE_RANGE', 'INVALID_CURSOR', 'UNAUTHORIZED', 'FORBIDDEN'),
        },
      },
    },
    async (request) => {
      const { limit, ...query } = request.query
      const page = await listImpactRecords(deps, principalOf(request), { ...query, limit: limit === undefined ? undefined : Number(limit) })
      return { hasMore: page.hasMore, data: page.data.map(presentImpactRecord) }
    },
  )

  app.get(
    '/funds/allocations/impact/export',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Export the impact records of a window as CSV',
        description:
          'The same filters as the list, every record of the window (at most 366 days), streamed as `text/csv` (RFC 4180): one ' +
          'row per credit or contribution line, UTC timestamps, amounts at the currency precision.',
        querystring: ImpactRecordExportQuerySchema,
        produces: ['text/csv'],
        response: {
          200: { description: 'RFC 4180 CSV with a header row', content: { 'text/csv': { schema: { type: 'string' } } } },
          ...listErrors,
        },
      },
    },
    async (request, reply) => {
      const records = await exportImpactRecords(deps, principalOf(request), request.query)
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="allocations.csv"')
        .send(Readable.from(csvChunks(records)))
    },
  )

  app.get(
    '/funds/allocations/:id/impact',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Get one impact record, by allocation id or reversal id',
        params: IdParamsSchema,
        response: { 200: ImpactRecordSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request) => presentImpactRecord(await getImpactRecord(deps, principalOf(request), request.params.id)),
  )

  app.get(
    '/funds/allocations/profit-share',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: "List the profit-share records of the key's tree (allocations and reversals with profit share)",
        description:
          'The impact list over records whose service fee is shared: the same window, `fundsOrganisationId`, keyset pages ' +
          'and errors, without `consumerReference` and `impactPartnerId` (as ekko). Each record lists the profit-share lines ' +
          "the key may see: its organisation's and those of beneficiaries below it; the tree's root sees every line and the " +
          "platform's part. A reversal is a record of its own with every amount negated.",
        querystring: ProfitShareRecordListQuerySchema,
        response: {
          200: ProfitShareRecordListSchema,
          ...errorResponses('BAD_REQUEST', 'INVALID_DATE_RANGE', 'INVALID_CURSOR', 'UNAUTHORIZED', 'FORBIDDEN'),
        },
      },
    },
    async (request) => {
      const { limit, ...query } = request.query
      const page = await listProfitShareRecords(deps, principalOf(request), {
        ...query,
        limit: limit === undefined ? undefined : Number(limit),
      })
      return { hasMore: page.hasMore, data: page.data.map(presentProfitShareRecord) }
    },
  )

  app.get(
    '/funds/allocations/profit-share/export',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Export the profit-share records of a window as CSV',
        description:
          'The same filters as the profit-share list, every record of the window (at most 366 days), streamed as `text/csv` ' +
          '(RFC 4180): one row per profit-share line the key may see.',
        querystring: ProfitShareRecordExportQuerySchema,
        produces: ['text/csv'],
        response: {
          200: { description: 'RFC 4180 CSV with a header row', content: { 'text/csv': { schema: { type: 'string' } } } },
          ...listErrors,
        },
      },
    },
    async (request, reply) => {
      const records = await exportProfitShareRecords(deps, principalOf(request), request.query)
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="profit-share.csv"')
        .send(Readable.from(profitShareCsvChunks(records)))
    },
  )

  app.get(
    '/funds/allocations/:id/profit-share',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Get one profit-share record, by allocation id or reversal id',
        description: "Not found unless the record is of the key's tree and has a profit-share line the key may see.",
        params: IdParamsSchema,
        response: { 200: ProfitShareRecordSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request) => presentProfitShareRecord(await getProfitShareRecord(deps, principalOf(request), request.params.id)),
  )
}

export default reconciliationRoutes
