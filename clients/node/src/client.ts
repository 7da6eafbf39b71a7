import { CanopyCore, type CanopyOptions } from './core.js'
import { Allocations } from './resources/allocations.js'
import { ApiKeys } from './resources/api-keys.js'
import { AuditEvents } from './resources/audit-events.js'
import { ImpactPartners } from './resources/impact-partners.js'
import { ImpactRecords } from './resources/impact-records.js'
import { Organisations } from './resources/organisations.js'
import { ProfitShare } from './resources/profit-share.js'
import { Quotes } from './resources/quotes.js'
import { Sessions } from './resources/sessions.js'
import { Statements } from './resources/statements.js'
import { Summaries } from './resources/summaries.js'
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
  readonly summaries = new Summaries(this)
  readonly profitShare = new ProfitShare(this)
  readonly statements = new Statements(this)
  readonly impactPartners = new ImpactPartners(this)
  readonly auditEvents = new AuditEvents(this)
  readonly organisations = new Organisations(this)
  readonly apiKeys = new ApiKeys(this)
  readonly webhookEndpoints = new WebhookEndpoints(this)
  /** Verifying what webhook endpoints receive (needs no API key). */
  readonly webhooks = new Webhooks()

  constructor(options: CanopyOptions) {
    super(options)
  }
}
