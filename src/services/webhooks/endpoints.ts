// Webhook endpoints of an organisation tree: create (with its signing secret, shown once), read, change, delete,
// rotate the secret, send a test event, and look at, retry and recover deliveries. An endpoint receives the events
// of its organisation and of its descendants.
import { isIP } from 'node:net'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/database.js'
import { findActiveSubtreeIds, findOrganisationById } from '../../db/repositories/organisations.js'
import {
  activeSecrets,
  attemptsOf,
  deleteEndpoint,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  insertTestEvent,
  listDeliveries,
  listEndpoints,
  recoverDeliveries,
  retryDeliveryNow,
  rotateSecret,
  updateEndpoint,
  type EndpointChanges,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../../db/repositories/webhooks.js'
import { standardEventBody, TEST_EVENT_TYPE } from '../../domain/webhooks.js'
import { AppError, notFound } from '../../errors.js'
import { newId } from '../../ids.js'
import { OPERATOR_ACTOR, type AccessResolver, type Principal } from '../access.js'
import { recordAudit } from '../audit.js'
import { changedFields } from '../../domain/audit.js'
import { BlockedAddressError, systemLookup, type AddressPolicy, type Lookup } from './address-policy.js'
import { generateSecret } from './signing.js'

export interface WebhookUrlRules {
  policy: AddressPolicy
  allowHttp: boolean
  lookup?: Lookup
}

export interface WebhookEndpointDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
  readonly clock: Clock
  readonly urls: WebhookUrlRules
  /** Tells this process's worker that a delivery is due now. */
  readonly wake: () => void
}

export const DEFAULT_GRACE_SECONDS = 86_400
export const MAX_GRACE_SECONDS = 604_800

const refused = (message: string): AppError =>
  new AppError('WEBHOOK_URL_REFUSED', `webhook url refused: ${message}`, [{ path: '/url', message }])

/**
 * A URL an endpoint may have: http(s) (http only when allowed), no user info, and a host that is not, and does not
 * resolve to, a refused address. A name that does not resolve now is accepted: every connection is checked again.
 */
export async function checkWebhookUrl(text: string, rules: WebhookUrlRules): Promise<string> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw refused('is not a valid absolute URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refused('must be an https URL')
  if (url.protocol === 'http:' && !rules.allowHttp) throw refused('must be https (http is allowed only with WEBHOOK_ALLOW_HTTP=true)')
  if (url.username || url.password) throw refused('must not contain user info')
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  try {
    await rules.policy.resolve(host, rules.lookup ?? systemLookup)
  } catch (error) {
    if (error instanceof BlockedAddressError) throw refused(`${host} is or resolves to a ${error.range} address (${error.address})`)
    if (isIP(host)) throw refused(`${host} is not a usable address`)
  }
  return url.href
}

export interface EndpointInput {
  organisationId: string
  url: string
  enabledEvents?: string[] | undefined
  format?: 'standard' | 'ekko' | undefined
  description?: string | undefined
}

const uniqueEvents = (events: readonly string[]): string[] => (events.includes('*') ? ['*'] : [...new Set(events)])

async function endpointOfTree(
  deps: Pick<WebhookEndpointDeps, 'db' | 'access'>,
  principal: Principal,
  id: string,
): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(deps.db, id)
  if (!endpoint || !(await deps.access.canSee(principal, endpoint.organisationId))) throw notFound('webhook endpoint')
  return endpoint
}

const assertEnabled = (endpoint: WebhookEndpoint): void => {
  if (endpoint.status !== 'enabled') {
    throw new AppError('WEBHOOK_ENDPOINT_DISABLED', 'webhook endpoint is disabled; enable it first (PATCH status: enabled)')
  }
}

export async function createEndpoint(
  deps: WebhookEndpointDeps,
  principal: Principal,
  input: EndpointInput,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  await deps.access.assertCanActOn(principal, input.organisationId)
  return insertNewEndpoint(deps.db, principal, input, deps.urls, deps.clock())
}

/** What the audit log keeps of an endpoint (never its secret). */
const auditedEndpoint = (endpoint: WebhookEndpoint) => ({
  webhookEndpointId: endpoint.id,
  url: endpoint.url,
  description: endpoint.description,
  enabledEvents: endpoint.enabledEvents,
  format: endpoint.format,
})

async function insertNewEndpoint(
  db: Kysely<Database>,
  by: Pick<Principal, 'actor' | 'ip'>,
  input: EndpointInput,
  rules: WebhookUrlRules,
  now: Date,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const url = await checkWebhookUrl(input.url, rules)
  const endpoint: WebhookEndpoint = {
    id: newId(),
    organisationId: input.organisationId,
    url,
    description: input.description ?? '',
    enabledEvents: uniqueEvents(input.enabledEvents ?? ['*']),
    format: input.format ?? 'standard',
    status: 'enabled',
    disabledReason: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  }
  const secret = generateSecret()
  await db.transaction().execute(async (trx) => {
    await insertEndpoint(trx, endpoint, { id: newId(), secret })
    await recordAudit(
      trx,
      by,
      [{ type: 'webhook_endpoint.created', organisationId: endpoint.organisationId, changes: auditedEndpoint(endpoint) }],
      now,
    )
  })
  return { endpoint, secret }
}

/** The endpoints of one organisation of the tree, or (no organisationId) of the whole tree. */
export async function listEndpointsOfTree(
  deps: Pick<WebhookEndpointDeps, 'db' | 'access'>,
  principal: Principal,
  organisationId: string | undefined,
): Promise<WebhookEndpoint[]> {
  if (organisationId !== undefined) {
    await deps.access.assertCanActOn(principal, organisationId)
    return listEndpoints(deps.db, [organisationId])
  }
  return listEndpoints(deps.db, await findActiveSubtreeIds(deps.db, principal.organisationId))
}

export const getEndpoint = (deps: Pick<WebhookEndpointDeps, 'db' | 'access'>, principal: Principal, id: string): Promise<WebhookEndpoint> =>
  endpointOfTree(deps, principal, id)

export async function changeEndpoint(
  deps: WebhookEndpointDeps,
  principal: Principal,
  id: string,
  changes: EndpointChanges,
): Promise<WebhookEndpoint> {
  const before = await endpointOfTree(deps, principal, id)
  const url = changes.url === undefined ? undefined : await checkWebhookUrl(changes.url, deps.urls)
  const enabledEvents = changes.enabledEvents && uniqueEvents(changes.enabledEvents)
  const now = deps.clock()
  const updated = await deps.db.transaction().execute(async (trx) => {
    const after = await updateEndpoint(trx, id, { ...changes, url, enabledEvents }, now)
    const diff = changedFields(before, after, ['url', 'description', 'enabledEvents', 'format', 'status'])
    if (Object.keys(diff).length > 0) {
      await recordAudit(
        trx,
        principal,
        [{ type: 'webhook_endpoint.updated', organisationId: before.organisationId, changes: { webhookEndpointId: id, ...diff } }],
        now,
      )
    }
    return after
  })
  if (changes.status === 'enabled') deps.wake()
  return updated
}

export async function removeEndpoint(
  deps: Pick<WebhookEndpointDeps, 'db' | 'access' | 'clock'>,
  principal: Principal,
  id: string,
): Promise<void> {
  const endpoint = await endpointOfTree(deps, principal, id)
  const now = deps.clock()
  await deps.db.transaction().execute(async (trx) => {
    await deleteEndpoint(trx, id)
    await recordAudit(
      trx,
      principal,
      [{ type: 'webhook_endpoint.deleted', organisationId: endpoint.organisationId, changes: auditedEndpoint(endpoint) }],
      now,
    )
  })
}

export interface RotatedSecret {
  endpoint: WebhookEndpoint
  secret: string
  previousSecretExpiresAt: Date
}

/** A new secret signs from now on; the previous one keeps signing (beside it) for the grace period. */
export async function rotateEndpointSecret(
  deps: WebhookEndpointDeps,
  principal: Principal,
  id: string,
  gracePeriodSeconds: number = DEFAULT_GRACE_SECONDS,
): Promise<RotatedSecret> {
  const endpoint = await endpointOfTree(deps, principal, id)
  const now = deps.clock()
  const graceUntil = new Date(now.getTime() + gracePeriodSeconds * 1000)
  const secret = generateSecret()
  await deps.db.transaction().execute(async (trx) => {
    await rotateSecret(trx, id, { id: newId(), secret }, now, graceUntil)
    await recordAudit(
      trx,
      principal,
      [
        {
          type: 'webhook_endpoint.secret_rotated',
          organisationId: endpoint.organisationId,
          changes: { webhookEndpointId: id, previousSecretExpiresAt: graceUntil },
        },
      ],
      now,
    )
  })
  return { endpoint, secret, previousSecretExpiresAt: graceUntil }
}

/** The secrets that sign deliveries now (the current one first), for an operator who lost the current one. */
export async function endpointSecrets(
  deps: WebhookEndpointDeps,
  principal: Principal,
  id: string,
): Promise<{ secret: string; expiresAt: Date | null }[]> {
  await endpointOfTree(deps, principal, id)
  return activeSecrets(deps.db, id, deps.clock())
}

/** Queues a `webhook_endpoint.test` event for this endpoint alone. */
export async function sendTestEvent(
  deps: WebhookEndpointDeps,
  principal: Principal,
  id: string,
): Promise<{ eventId: string; deliveryId: string }> {
  const endpoint = await endpointOfTree(deps, principal, id)
  assertEnabled(endpoint)
  const now = deps.clock()
  const event = { id: newId(), type: TEST_EVENT_TYPE, timestamp: now, organisationId: endpoint.organisationId }
  const body = standardEventBody({ ...event, data: { webhookEndpointId: endpoint.id, message: 'a test event from Canopy' } })
  const deliveryId = newId()
  await deps.db.transaction().execute(async (trx) => {
    await insertTestEvent(trx, { ...event, body, ekkoBody: null, createdAt: now }, endpoint.id, deliveryId)
    await recordAudit(
      trx,
      principal,
      [{ type: 'webhook_endpoint.tested', organisationId: endpoint.organisationId, changes: { webhookEndpointId: id, eventId: event.id } }],
      now,
    )
  })
  deps.wake()
  return { eventId: event.id, deliveryId }
}

export type DeliveryWithAttempts = WebhookDelivery & { attempts: WebhookAttempt[] }

/** An endpoint's deliveries, newest first, with their attempts. */
export async function listEndpointDeliveries(
  deps: Pick<WebhookEndpointDeps, 'db' | 'access'>,
  principal: Principal,
  id: string,
  options: { status?: 'pending' | 'succeeded' | 'failed' | undefined; limit: number; startingAfter?: string | undefined },
): Promise<{ hasMore: boolean; data: DeliveryWithAttempts[] }> {
  await endpointOfTree(deps, principal, id)
  let before: { createdAt: Date; id: string } | undefined
  if (options.startingAfter !== undefined) {
    const cursor = await findDelivery(deps.db, options.startingAfter)
    if (!cursor || cursor.endpointId !== id) {
      throw new AppError('INVALID_CURSOR', 'startingAfter is not a delivery of this endpoint', [
        { path: '/startingAfter', message: 'is not a delivery of this endpoint' },
      ])
    }
    before = { createdAt: cursor.createdAt, id: cursor.id }
  }
  const rows = await listDeliveries(deps.db, id, { status: options.status, limit: options.limit, before })
  const page = rows.slice(0, options.limit)
  const attempts = await attemptsOf(
    deps.db,
    page.map((d) => d.id),
  )
  return { hasMore: rows.length > options.limit, data: page.map((d) => ({ ...d, attempts: attempts.get(d.id) ?? [] })) }
}

async function deliveryOfTree(deps: Pick<WebhookEndpointDeps, 'db' | 'access'>, principal: Principal, deliveryId: string) {
  const delivery = await findDelivery(deps.db, deliveryId)
  const endpoint = delivery && (await findEndpoint(deps.db, delivery.endpointId))
  if (!delivery || !endpoint || !(await deps.access.canSee(principal, endpoint.organisationId))) throw notFound('webhook delivery')
  return { delivery, endpoint }
}

/** One more attempt now (never rescheduled if it fails). */
export async function retryDelivery(deps: WebhookEndpointDeps, principal: Principal, deliveryId: string): Promise<DeliveryWithAttempts> {
  const { endpoint } = await deliveryOfTree(deps, principal, deliveryId)
  assertEnabled(endpoint)
  const now = deps.clock()
  await deps.db.transaction().execute(async (trx) => {
    await retryDeliveryNow(trx, deliveryId, now)
    await recordAudit(
      trx,
      principal,
      [
        {
          type: 'webhook_delivery.retried',
          organisationId: endpoint.organisationId,
          changes: { webhookEndpointId: endpoint.id, deliveryId },
        },
      ],
      now,
    )
  })
  deps.wake()
  const delivery = (await findDelivery(deps.db, deliveryId)) as WebhookDelivery
  return { ...delivery, attempts: (await attemptsOf(deps.db, [deliveryId])).get(deliveryId) ?? [] }
}

/** Every delivery that failed (created since `since`) starts its schedule again. */
export async function recoverEndpoint(
  deps: WebhookEndpointDeps,
  principal: Principal,
  id: string,
  since: Date,
): Promise<{ recovered: number }> {
  const endpoint = await endpointOfTree(deps, principal, id)
  assertEnabled(endpoint)
  const now = deps.clock()
  const recovered = await deps.db.transaction().execute(async (trx) => {
    const count = await recoverDeliveries(trx, id, since, now)
    await recordAudit(
      trx,
      principal,
      [
        {
          type: 'webhook_endpoint.recovered',
          organisationId: endpoint.organisationId,
          changes: { webhookEndpointId: id, since, recovered: count },
        },
      ],
      now,
    )
    return count
  })
  if (recovered > 0) deps.wake()
  return { recovered }
}

// ---------------------------------------------------------------------------------------------------------------
// Operator commands (CLI): any organisation, no API key.

export async function createEndpointAsOperator(
  db: Kysely<Database>,
  input: EndpointInput,
  rules: WebhookUrlRules,
  now: Date,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  if (!(await findOrganisationById(db, input.organisationId))) throw notFound('organisation')
  return insertNewEndpoint(db, { actor: OPERATOR_ACTOR, ip: null }, input, rules, now)
}

export async function listEndpointsAsOperator(db: Kysely<Database>, organisationId: string): Promise<WebhookEndpoint[]> {
  if (!(await findOrganisationById(db, organisationId))) throw notFound('organisation')
  return listEndpoints(db, [organisationId])
}

export async function deleteEndpointAsOperator(db: Kysely<Database>, id: string): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(db, id)
  if (!endpoint) throw notFound('webhook endpoint')
  await deleteEndpoint(db, id)
  return endpoint
}
