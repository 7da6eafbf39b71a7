import type { RequestOptions } from '../core.js'
import type { PagePromise } from '../pagination.js'
import type { ImpactRecord, ImpactRecordPage, QueryParams } from '../types.js'
import { recordPages, type WindowListParams, type WindowParams } from './records.js'
import { Resource } from './resource.js'

/** The window [dateTimeFrom, dateTimeTo) as ISO strings or Dates; limit is the page size (1–100, default 10). */
export type ImpactRecordListParams = WindowListParams<QueryParams<'/funds/allocations/impact', 'get'>>
export type ImpactRecordExportParams = WindowParams<QueryParams<'/funds/allocations/impact/export', 'get'>>

export class ImpactRecords extends Resource {
  /**
   * GET /funds/allocations/impact: the reconciliation records of a window. `await` it for one page, or
   * `for await (const record of canopy.impactRecords.list({ dateTimeFrom, dateTimeTo }))` for every record of the
   * window, oldest first (newest first when you start from `endingBefore`).
   */
  list(params: ImpactRecordListParams, options?: RequestOptions): PagePromise<ImpactRecord, ImpactRecordPage> {
    return recordPages(params, (cursorQuery) =>
      this.core.request('get', '/funds/allocations/impact', { query: { ...params, ...cursorQuery } }, options),
    )
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
