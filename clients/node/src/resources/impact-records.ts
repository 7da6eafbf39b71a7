import type { RequestOptions } from '../core.js'
import { PagePromise } from '../pagination.js'
import type { ImpactRecord, ImpactRecordPage, QueryParams } from '../types.js'
import { Resource } from './resource.js'

type ListQuery = QueryParams<'/funds/allocations/impact', 'get'>

/** The window [dateTimeFrom, dateTimeTo) as ISO strings or Dates; limit is the page size (1–100, default 10). */
export type ImpactRecordListParams = Omit<ListQuery, 'dateTimeFrom' | 'dateTimeTo' | 'limit'> & {
  dateTimeFrom: string | Date
  dateTimeTo: string | Date
  limit?: number
}
export type ImpactRecordExportParams = Omit<QueryParams<'/funds/allocations/impact/export', 'get'>, 'dateTimeFrom' | 'dateTimeTo'> & {
  dateTimeFrom: string | Date
  dateTimeTo: string | Date
}

/** A record's cursor: a reversal's record is addressed by its reversalId. */
const recordId = (record: ImpactRecord): string => record.reversalId ?? record.fundsAllocationId

export class ImpactRecords extends Resource {
  /**
   * GET /funds/allocations/impact: the reconciliation records of a window. `await` it for one page, or
   * `for await (const record of canopy.impactRecords.list({ dateTimeFrom, dateTimeTo }))` for every record of the
   * window, oldest first (newest first when you start from `endingBefore`).
   */
  list(params: ImpactRecordListParams, options?: RequestOptions): PagePromise<ImpactRecord, ImpactRecordPage> {
    const backwards = params.endingBefore !== undefined
    return new PagePromise<ImpactRecord, ImpactRecordPage>({
      backwards,
      fetch: (cursor) =>
        this.core.request(
          'get',
          '/funds/allocations/impact',
          { query: cursor === undefined ? params : { ...params, ...(backwards ? { endingBefore: cursor } : { startingAfter: cursor }) } },
          options,
        ),
      next: (page) => {
        const edge = backwards ? page.data[0] : page.data[page.data.length - 1]
        return edge && recordId(edge)
      },
    })
  }

  /** GET /funds/allocations/:id/impact: one record, by allocation id or reversal id. */
  retrieve(id: string, options?: RequestOptions) {
    return this.core.request('get', '/funds/allocations/{id}/impact', { params: { id } }, options)
  }

  /**
   * GET /funds/allocations/impact/export: the window as CSV (RFC 4180), streamed. Resolves when the answer starts
   * (errors are thrown as usual) with a Node Readable of its bytes: `(await …exportCsv(…)).pipe(createWriteStream(…))`.
   */
  exportCsv(params: ImpactRecordExportParams, options?: RequestOptions) {
    return this.core.stream('get', '/funds/allocations/impact/export', { query: params }, options)
  }
}
