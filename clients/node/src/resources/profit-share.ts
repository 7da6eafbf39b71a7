import type { RequestOptions } from '../core.js'
import type { PagePromise } from '../pagination.js'
import type { ProfitShareRecord, ProfitShareRecordPage, QueryParams } from '../types.js'
import { recordPages, type WindowListParams, type WindowParams } from './records.js'
import { Resource } from './resource.js'

/** The window [dateTimeFrom, dateTimeTo) as ISO strings or Dates; limit is the page size (1–100, default 10). */
export type ProfitShareListParams = WindowListParams<QueryParams<'/funds/allocations/profit-share', 'get'>>
export type ProfitShareExportParams = WindowParams<QueryParams<'/funds/allocations/profit-share/export', 'get'>>

export class ProfitShare extends Resource {
  /**
   * GET /funds/allocations/profit-share: the profit-share records of a window (what each organisation of the tree
   * earned on each allocation and reversal). `await` it for one page, or `for await` over every record.
   */
  list(params: ProfitShareListParams, options?: RequestOptions): PagePromise<ProfitShareRecord, ProfitShareRecordPage> {
    return recordPages(params, (cursorQuery) =>
      this.core.request('get', '/funds/allocations/profit-share', { query: { ...params, ...cursorQuery } }, options),
    )
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
