import type { RequestOptions } from '../core.js'
import type { QueryParams } from '../types.js'
import { Resource } from './resource.js'

/** An organisation of the key's tree and a month, `YYYY-MM` (UTC). */
export type StatementParams = QueryParams<'/v3/statements', 'get'>

export class Statements extends Resource {
  /** GET /v3/statements: an organisation's monthly statement (the current month gives the figures so far). */
  retrieve(params: StatementParams, options?: RequestOptions) {
    return this.core.request('get', '/v3/statements', { query: params }, options)
  }

  /** The same statement as CSV (`Accept: text/csv`), streamed (a Node Readable of its bytes). */
  retrieveCsv(params: StatementParams, options?: RequestOptions) {
    return this.core.stream('get', '/v3/statements', { query: params, streamMediaType: 'text/csv' }, options)
  }
}
