// Request and response types of each operation, read from the generated contract (src/generated/openapi.ts):
// `RequestBody<'/quotes/carbon', 'post'>`, `ResponseBody<'/quotes/{id}', 'get'>`, `QueryParams<…>`.
import type { paths, webhooks } from './generated/openapi.js'

export type { paths, webhooks, components } from './generated/openapi.js'

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete'

/** The operation of a path and method (never when the API has no such operation). */
export type Operation<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>

/** Paths that have an operation for method M. */
export type PathsWith<M extends HttpMethod> = {
  [P in keyof paths]: [Operation<P, M>] extends [never] ? never : P
}[keyof paths]

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never

/** The JSON request body of an operation (never when it takes none). */
export type RequestBody<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { requestBody: infer R }
    ? JsonContent<R>
    : Operation<P, M> extends { requestBody?: infer R }
      ? JsonContent<NonNullable<R>>
      : never

type Responses<P extends keyof paths, M extends HttpMethod> = Operation<P, M> extends { responses: infer R } ? R : never

/** The body of an operation's success answer (2xx); `undefined` for 204. */
export type ResponseBody<P extends keyof paths, M extends HttpMethod> = {
  [S in keyof Responses<P, M>]: S extends 200 | 201 | 202 ? JsonContent<Responses<P, M>[S]> : S extends 204 ? undefined : never
}[keyof Responses<P, M>]

/** The error codes an operation documents, e.g. `ErrorCodeOf<'/funds/allocations/{id}/reverse', 'post'>`. */
export type ErrorCodeOf<P extends keyof paths, M extends HttpMethod> = {
  [S in keyof Responses<P, M>]: S extends 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 503
    ? JsonContent<Responses<P, M>[S]> extends { code: infer C }
      ? C
      : never
    : never
}[keyof Responses<P, M>]

type Parameters<P extends keyof paths, M extends HttpMethod> = Operation<P, M> extends { parameters: infer X } ? X : never
export type QueryParams<P extends keyof paths, M extends HttpMethod> = NonNullable<Parameters<P, M> extends { query?: infer Q } ? Q : never>
export type PathParams<P extends keyof paths, M extends HttpMethod> = NonNullable<Parameters<P, M> extends { path?: infer Q } ? Q : never>

type WebhookBody<N extends keyof webhooks> = NonNullable<webhooks[N]['post']> extends { requestBody: infer R } ? JsonContent<R> : never

// The resources' main objects, by name.
export type Organisation = ResponseBody<'/v3/organisations/{id}', 'get'>
export type ApiKey = ResponseBody<'/v3/api-keys/{id}/revoke', 'post'>
export type CreatedApiKey = ResponseBody<'/v3/api-keys', 'post'>
export type RotatedApiKey = ResponseBody<'/v3/api-keys/{id}/rotate', 'post'>
export type CarbonQuote = ResponseBody<'/quotes/carbon', 'post'>
export type NatureQuote = ResponseBody<'/quotes/nature', 'post'>
export type Quote = ResponseBody<'/quotes/{id}', 'get'>
export type QuoteProject = ResponseBody<'/quotes/{id}/projects', 'get'>[number]
export type CreatedSession = ResponseBody<'/v3/post-purchase/sessions', 'post'>
export type Session = ResponseBody<'/v3/post-purchase/sessions/{id}', 'get'>
export type Allocation = ResponseBody<'/funds/allocations', 'post'>
export type Reversal = ResponseBody<'/funds/allocations/{id}/reverse', 'post'>
export type ImpactRecord = ResponseBody<'/funds/allocations/{id}/impact', 'get'>
export type ImpactRecordPage = ResponseBody<'/funds/allocations/impact', 'get'>
export type WebhookEndpoint = ResponseBody<'/v3/webhook-endpoints/{id}', 'get'>
export type CreatedWebhookEndpoint = ResponseBody<'/v3/webhook-endpoints', 'post'>
export type RotatedWebhookSecret = ResponseBody<'/v3/webhook-endpoints/{id}/rotate-secret', 'post'>
export type WebhookDelivery = ResponseBody<'/v3/webhook-endpoints/deliveries/{deliveryId}/retry', 'post'>
export type WebhookDeliveryPage = ResponseBody<'/v3/webhook-endpoints/{id}/deliveries', 'get'>
export type OrganisationTree = ResponseBody<'/v3/organisations', 'get'>
export type QuoteExplanation = ResponseBody<'/quotes/{id}/explain', 'get'>
export type ProfitShareRecord = ResponseBody<'/funds/allocations/{id}/profit-share', 'get'>
export type ProfitShareRecordPage = ResponseBody<'/funds/allocations/profit-share', 'get'>
export type AllocationSummary = ResponseBody<'/funds/allocations/summary', 'get'>
export type Statement = ResponseBody<'/v3/statements', 'get'>
export type ImpactPartner = ResponseBody<'/v3/impact-partners', 'get'>[number]
export type CatalogueProject = ResponseBody<'/v3/impact-partners/projects', 'get'>[number]
export type AuditEventPage = ResponseBody<'/v3/audit-events', 'get'>
export type AuditEvent = AuditEventPage['data'][number]

/** The events a `format: "standard"` endpoint receives (the OpenAPI document's webhooks). */
export type AllocationCreatedEvent = WebhookBody<'allocation.created'>
export type AllocationReversedEvent = WebhookBody<'allocation.reversed'>
export type WebhookEndpointTestEvent = WebhookBody<'webhook_endpoint.test'>
export type WebhookEvent = AllocationCreatedEvent | AllocationReversedEvent | WebhookEndpointTestEvent
/** The bodies a `format: "ekko"` endpoint receives. */
export type EkkoWebhookEvent = WebhookBody<'IMPACT_PAYMENT'> | WebhookBody<'IMPACT_PAYMENT_REVERSAL'>
