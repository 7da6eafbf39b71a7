import type { RequestOptions } from '../core.js'
import { PagePromise } from '../pagination.js'
import type { ProfitShareRecord, ProfitShareRecordPage, QueryParams } from '../types.js'
import { Resource } from './resource.js'

type ListQuery = QueryParams<'/funds/allocations/profit-share', 'get'>

/** The window [dateTimeFrom, dateTimeTo) as ISO strings or Dates; limit is the page size (1–100, default 10). */
export type ProfitShareListParams = Omit<ListQuery, 'dateTimeFrom' | 'dateTimeTo' | 'limit'> & {
  dateTimeFrom: string | Date
  dateTimeTo: string | Date
  limit?: number
}
export type ProfitShareExportParams = Omit<QueryParams<'/funds/allocations/profit-share/export', 'get'>, 'dateTimeFrom' | 'dateTimeTo'> & {
  dateTimeFrom: string | Date
  dateTimeTo: string | Date
}

/** A record's cursor: a reversal's record is addressed by its reversalId. */
const recordId = (record: ProfitShareRecord): string => record.reversalId ?? record.fundsAllocationId

export class ProfitShare extends Resource {
  /**
   * GET /funds/allocations/profit-share: the profit-share records of a window (what each organisation of the tree
   * earned on each allocation and reversal). `await` it for one page, or `for await` over every record.
   */
  list(params: ProfitShareListParams, options?: RequestOptions): PagePromise<ProfitShareRecord, ProfitShareRecordPage> {
    const backwards = params.endingBefore !== undefined
    return new PagePromise<ProfitShareRecord, ProfitShareRecordPage>({
      backwards,
      fetch: (cursor) =>
        this.core.request(
          'get',
          '/funds/allocations/profit-share',
          { query: cursor === undefined ? params : { ...params, ...(backwards ? { endingBefore: cursor } : { startingAfter: cursor }) } },
          options,
        ),
      next: (page) => {
        const edge = backwards ? page.data[0] : page.data[page.data.length - 1]
        return edge && recordId(edge)
      },
    })
  }

  /** GET /funds/allocations/:id/profit-share: one record, by allocation id or reversal id. */
  retrieve(id: string, options?: RequestOptions) {
    return this.core.request('get', '/funds/allocations/{id}/profit-share', { params: { id } }, options)
  }

  /** GET /funds/allocations/profit-share/export: the window as CSV, streamed (a Node Readable of its bytes). */
  exportCsv(params: ProfitShareExportParams, options?: RequestOptions) {
    return this.core.stream('get', '/funds/allocations/profit-share/export', { query: params }, options)
  }
}
