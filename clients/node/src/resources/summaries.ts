import type { RequestOptions } from '../core.js'
import type { QueryParams } from '../types.js'
import type { WindowParams } from './records.js'
import { Resource } from './resource.js'

/** The window [dateTimeFrom, dateTimeTo) as ISO strings or Dates, the grouping and (for time buckets) the time zone. */
export type SummaryParams = WindowParams<QueryParams<'/funds/allocations/summary', 'get'>>

export class Summaries extends Resource {
  /**
   * GET /funds/allocations/summary: a window's allocations and reversals summed per currency (never across
   * currencies), grouped by day, week, month, impact partner, project, organisation or currency. Its totals equal
   * the sum of the window's impact records to the minor unit.
   */
  retrieve(params: SummaryParams, options?: RequestOptions) {
    return this.core.request('get', '/funds/allocations/summary', { query: params }, options)
  }
}
