// @canopy-climate/node: the typed Node.js client of the Canopy API.
export { Canopy } from './client.js'
export { Canopy as default } from './client.js'
export type {
  CanopyEvents,
  CanopyOptions,
  FetchLike,
  RequestEvent,
  RequestOptions,
  ResponseEvent,
  ResponseMeta,
  WithResponse,
} from './core.js'
export { CanopyCore } from './core.js'
export {
  CanopyApiError,
  CanopyAuthenticationError,
  CanopyConflictError,
  CanopyConnectionError,
  CanopyError,
  CanopyGoneError,
  CanopyInvalidRequestError,
  CanopyNotFoundError,
  CanopyPermissionError,
  CanopyRateLimitError,
  CanopyServerError,
  CanopyTimeoutError,
  CanopyUnprocessableError,
  CanopyWebhookVerificationError,
  type ClientErrorCode,
  type CodeWithStatus,
  type ErrorCode,
  type ErrorDetail,
} from './errors.js'
export { ERROR_CODE_STATUS } from './generated/contract.js'
export { fromMinorUnits, minorUnitDigits, toMinorUnits } from './money.js'
export { PagePromise, type Page } from './pagination.js'
export { Resource } from './resources/resource.js'
export type { RetryPolicy, BackoffSettings } from './retry.js'
export type * from './types.js'
export type { AllocationOptions, AllocationParams } from './resources/allocations.js'
export type { ApiKeyCreateParams, ApiKeyListParams, ApiKeyRotateParams } from './resources/api-keys.js'
export type { AuditEventListParams } from './resources/audit-events.js'
export type { CatalogueProjectListParams, ImpactPartnerListParams } from './resources/impact-partners.js'
export type { ImpactRecordExportParams, ImpactRecordListParams } from './resources/impact-records.js'
export type { OrganisationCreateParams, OrganisationUpdateParams } from './resources/organisations.js'
export type { ProfitShareExportParams, ProfitShareListParams } from './resources/profit-share.js'
export type { CarbonQuoteParams, NatureQuoteParams } from './resources/quotes.js'
export type { StatementParams } from './resources/statements.js'
export type { SummaryParams } from './resources/summaries.js'
export type { CheckoutSessionParams, PostPurchaseSessionParams, SessionReadParams } from './resources/sessions.js'
export type {
  WebhookDeliveryListParams,
  WebhookEndpointCreateParams,
  WebhookEndpointListParams,
  WebhookEndpointUpdateParams,
  WebhookRecoverParams,
  WebhookSecretRotateParams,
} from './resources/webhook-endpoints.js'
export { Webhooks, type VerifyOptions, type WebhookHeaders } from './webhooks.js'
export { VERSION } from './version.js'
