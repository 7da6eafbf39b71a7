import { CanopyCore, type CanopyOptions } from './core.js'
import { Allocations } from './resources/allocations.js'
import { ApiKeys } from './resources/api-keys.js'
import { ImpactRecords } from './resources/impact-records.js'
import { Organisations } from './resources/organisations.js'
import { Quotes } from './resources/quotes.js'
import { Sessions } from './resources/sessions.js'
import { WebhookEndpoints } from './resources/webhook-endpoints.js'
import { Webhooks } from './webhooks.js'

/**
 * The Canopy API client: `new Canopy({ apiKey, baseUrl })`. One instance per API key; it holds no connection of its
 * own (fetch pools them), so keep one for the life of the process.
 */
export class Canopy extends CanopyCore {
  readonly quotes = new Quotes(this)
  readonly sessions = new Sessions(this)
  readonly allocations = new Allocations(this)
  readonly impactRecords = new ImpactRecords(this)
  readonly organisations = new Organisations(this)
  readonly apiKeys = new ApiKeys(this)
  readonly webhookEndpoints = new WebhookEndpoints(this)
  /** Verifying what webhook endpoints receive (needs no API key). */
  readonly webhooks = new Webhooks()

  constructor(options: CanopyOptions) {
    super(options)
  }
}
