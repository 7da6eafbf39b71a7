import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentWebhookDelivery, presentWebhookEndpoint } from '../http/presenters/webhook-endpoints.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import {
  CreatedWebhookEndpointSchema,
  CreateWebhookEndpointBodySchema,
  DeliveryParamsSchema,
  ListDeliveriesQuerySchema,
  ListWebhookEndpointsQuerySchema,
  RecoverBodySchema,
  RecoveredSchema,
  RotatedSecretSchema,
  RotateSecretBodySchema,
  TestEventSchema,
  UpdateWebhookEndpointBodySchema,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
} from '../http/schemas/webhook-endpoints.js'
import {
  changeEndpoint,
  createEndpoint,
  getEndpoint,
  listEndpointDeliveries,
  listEndpointsOfTree,
  recoverEndpoint,
  removeEndpoint,
  retryDelivery,
  rotateEndpointSecret,
  sendTestEvent,
  type WebhookEndpointDeps,
} from '../services/webhooks/endpoints.js'

const webhookEndpointRoutes: FastifyPluginAsyncTypebox<{ deps: WebhookEndpointDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['webhooks'], security: bearerSecurity }
  const writeErrors = ['BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'REQUEST_ENTITY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const
  // An empty POST (no body) is an empty object.
  const emptyBody = async (request: { body: unknown }) => {
    request.body ??= {}
  }

  app.post(
    '/webhook-endpoints',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        ...common,
        summary: 'Create a webhook endpoint',
        description:
          'Events of `organisationId` and of its descendants are POSTed to `url`, signed (Standard Webhooks). The signing ' +
          'secret is in `secret`, shown once. A URL that is not https (http needs WEBHOOK_ALLOW_HTTP), has user info, or ' +
          'whose host is or resolves to a private, loopback, link-local, CGNAT, metadata, unspecified, IPv4-mapped or ' +
          'unique-local address is refused (WEBHOOK_URL_REFUSED).',
        body: CreateWebhookEndpointBodySchema,
        response: {
          201: CreatedWebhookEndpointSchema,
          ...errorResponses(
            'BAD_REQUEST',
            'WEBHOOK_URL_REFUSED',
            'UNAUTHORIZED',
            'FORBIDDEN',
            'REQUEST_ENTITY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
          ),
        },
      },
    },
    async (request, reply) => {
      const { endpoint, secret } = await createEndpoint(deps, principalOf(request), request.body)
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...presentWebhookEndpoint(endpoint), secret })
    },
  )

  app.get(
    '/webhook-endpoints',
    {
      config: { permission: 'webhooks:read' },
      schema: {
        ...common,
        summary: 'List webhook endpoints',
        description: "The endpoints of `organisationId`, or (without it) of the calling key's whole tree, oldest first.",
        querystring: ListWebhookEndpointsQuerySchema,
        response: { 200: WebhookEndpointListSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN') },
      },
    },
    async (request) => ({
      data: (await listEndpointsOfTree(deps, principalOf(request), request.query.organisationId)).map(presentWebhookEndpoint),
    }),
  )

  app.get(
    '/webhook-endpoints/:id',
    {
      config: { permission: 'webhooks:read' },
      schema: {
        ...common,
        summary: 'Read a webhook endpoint',
        params: IdParamsSchema,
        response: { 200: WebhookEndpointSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request) => presentWebhookEndpoint(await getEndpoint(deps, principalOf(request), request.params.id)),
  )

  app.patch(
    '/webhook-endpoints/:id',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        ...common,
        summary: 'Change, enable or disable a webhook endpoint',
        description: 'Enabling clears the failing streak; deliveries that failed meanwhile can be sent again with …/recover.',
        params: IdParamsSchema,
        body: UpdateWebhookEndpointBodySchema,
        response: { 200: WebhookEndpointSchema, ...errorResponses(...writeErrors, 'WEBHOOK_URL_REFUSED') },
      },
    },
    async (request) => presentWebhookEndpoint(await changeEndpoint(deps, principalOf(request), request.params.id, request.body)),
  )

  app.delete(
    '/webhook-endpoints/:id',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        ...common,
        summary: 'Delete a webhook endpoint',
        description: 'With its secrets and deliveries; nothing more is sent to it.',
        params: IdParamsSchema,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request, reply) => {
      await removeEndpoint(deps, principalOf(request), request.params.id)
      return reply.code(204).send()
    },
  )

  app.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      config: { permission: 'webhooks:write' },
      preValidation: emptyBody,
      schema: {
        ...common,
        summary: "Rotate a webhook endpoint's signing secret",
        description:
          'A new secret (in `secret`, shown once) signs from now on; the previous one also signs every delivery ' +
          '(a second v1 signature) for `gracePeriodSeconds` (default 24 h), then stops.',
        params: IdParamsSchema,
        body: RotateSecretBodySchema,
        response: { 201: RotatedSecretSchema, ...errorResponses(...writeErrors) },
      },
    },
    async (request, reply) => {
      const rotated = await rotateEndpointSecret(deps, principalOf(request), request.params.id, request.body.gracePeriodSeconds)
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({
          ...presentWebhookEndpoint(rotated.endpoint),
          secret: rotated.secret,
          previousSecretExpiresAt: rotated.previousSecretExpiresAt.toISOString(),
        })
    },
  )

  app.post(
    '/webhook-endpoints/:id/test',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        ...common,
        summary: 'Send a test event',
        description: 'Queues a `webhook_endpoint.test` event for this endpoint alone; follow it with …/deliveries.',
        params: IdParamsSchema,
        response: { 202: TestEventSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'WEBHOOK_ENDPOINT_DISABLED') },
      },
    },
    async (request, reply) => reply.code(202).send(await sendTestEvent(deps, principalOf(request), request.params.id)),
  )

  app.get(
    '/webhook-endpoints/:id/deliveries',
    {
      config: { permission: 'webhooks:read' },
      schema: {
        ...common,
        summary: "A webhook endpoint's deliveries, with their attempts",
        description: 'Newest first; `startingAfter` (a delivery id) gives the next page.',
        params: IdParamsSchema,
        querystring: ListDeliveriesQuerySchema,
        response: { 200: WebhookDeliveryListSchema, ...errorResponses('BAD_REQUEST', 'INVALID_CURSOR', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request) => {
      const { status, limit = '20', startingAfter } = request.query
      const page = await listEndpointDeliveries(deps, principalOf(request), request.params.id, {
        status,
        limit: Number(limit),
        startingAfter,
      })
      return { hasMore: page.hasMore, data: page.data.map(presentWebhookDelivery) }
    },
  )

  app.post(
    '/webhook-endpoints/deliveries/:deliveryId/retry',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        ...common,
        summary: 'Retry a delivery now',
        description: 'One more attempt, now (the same webhook-id); a manual retry that fails is not rescheduled.',
        params: DeliveryParamsSchema,
        response: {
          202: WebhookDeliverySchema,
          ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'WEBHOOK_ENDPOINT_DISABLED'),
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(presentWebhookDelivery(await retryDelivery(deps, principalOf(request), request.params.deliveryId))),
  )

  app.post(
    '/webhook-endpoints/:id/recover',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        ...common,
        summary: 'Redeliver everything that failed since a time',
        description: 'Every failed delivery of this endpoint created at or after `since` starts its retry schedule again.',
        params: IdParamsSchema,
        body: RecoverBodySchema,
        response: { 202: RecoveredSchema, ...errorResponses(...writeErrors, 'WEBHOOK_ENDPOINT_DISABLED') },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await recoverEndpoint(deps, principalOf(request), request.params.id, new Date(request.body.since))),
  )
}

export default webhookEndpointRoutes
