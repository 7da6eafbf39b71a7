import type { RequestOptions } from '../core.js'
import { PagePromise } from '../pagination.js'
import type { AuditEvent, AuditEventPage, QueryParams } from '../types.js'
import { Resource } from './resource.js'

export type AuditEventListParams = Omit<QueryParams<'/v3/audit-events', 'get'>, 'limit'> & { limit?: number }

export class AuditEvents extends Resource {
  /** GET /v3/audit-events: who did what to the tree's keys, webhooks, organisations and users, newest first. */
  list(params: AuditEventListParams = {}, options?: RequestOptions): PagePromise<AuditEvent, AuditEventPage> {
    return new PagePromise<AuditEvent, AuditEventPage>({
      fetch: (cursor) =>
        this.core.request(
          'get',
          '/v3/audit-events',
          { query: cursor === undefined ? params : { ...params, startingAfter: cursor } },
          options,
        ),
      next: (page) => page.data[page.data.length - 1]?.id,
    })
  }
}
