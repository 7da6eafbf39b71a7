import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentApiKey, presentIssuedKey, presentRotatedKey } from '../http/presenters/api-keys.js'
import {
  ApiKeyListSchema,
  ApiKeySchema,
  CreateApiKeyBodySchema,
  CreatedApiKeySchema,
  ListApiKeysQuerySchema,
  RotateApiKeyBodySchema,
  RotatedApiKeySchema,
} from '../http/schemas/api-keys.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import { issueApiKey, listOrganisationApiKeys, revokeApiKeyOfTree, rotateApiKey, type ApiKeyDeps } from '../services/api-keys.js'

const apiKeyRoutes: FastifyPluginAsyncTypebox<{ deps: ApiKeyDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['api keys'], security: bearerSecurity }

  app.post(
    '/api-keys',
    {
      config: { permission: 'apiKeys:write' },
      schema: {
        ...common,
        summary: 'Create an API key for an organisation of the tree',
        description:
          "Issues a key for `organisationId`, the calling key's organisation or one of its descendants (403 otherwise). " +
          'The full key is in `apiKey`, shown once (`cache-control: no-store`).',
        body: CreateApiKeyBodySchema,
        response: {
          201: CreatedApiKeySchema,
          ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'REQUEST_ENTITY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'),
        },
      },
    },
    async (request, reply) => {
      const issued = await issueApiKey(deps, principalOf(request), request.body)
      return reply.code(201).header('cache-control', 'no-store').send(presentIssuedKey(issued))
    },
  )

  app.get(
    '/api-keys',
    {
      config: { permission: 'apiKeys:read' },
      schema: {
        ...common,
        summary: 'List the API keys of an organisation of the tree',
        description:
          "The keys of `organisationId` (default: the calling key's organisation), oldest first, without secrets: " +
          'prefix, mode, createdAt, revokedAt, expiresAt and the key that replaced a rotated one.',
        querystring: ListApiKeysQuerySchema,
        response: { 200: ApiKeyListSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN') },
      },
    },
    async (request) => ({
      keys: (await listOrganisationApiKeys(deps, principalOf(request), request.query.organisationId)).map(presentApiKey),
    }),
  )

  app.post(
    '/api-keys/:id/rotate',
    {
      config: { permission: 'apiKeys:write' },
      // The body is optional: an empty POST rotates with the default expiry.
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        ...common,
        summary: 'Rotate an API key of the tree',
        description:
          'Issues a new key for the same organisation and mode (in `apiKey`, shown once) and lets the old key work for ' +
          '`expireOldInSeconds` more (default 24 h; 0 = it stops now), after which it is refused like a revoked key. ' +
          'Rotating the key you are calling with is allowed. Another tree’s key is 404; a revoked or expired key, or one ' +
          'already rotated, is 409.',
        params: IdParamsSchema,
        body: RotateApiKeyBodySchema,
        response: {
          201: RotatedApiKeySchema,
          ...errorResponses(
            'BAD_REQUEST',
            'UNAUTHORIZED',
            'NOT_FOUND',
            'API_KEY_INACTIVE',
            'API_KEY_ALREADY_ROTATED',
            'REQUEST_ENTITY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
          ),
        },
      },
    },
    async (request, reply) => {
      const rotated = await rotateApiKey(deps, principalOf(request), {
        keyId: request.params.id,
        expireOldInSeconds: request.body.expireOldInSeconds,
      })
      return reply.code(201).header('cache-control', 'no-store').send(presentRotatedKey(rotated))
    },
  )

  app.post(
    '/api-keys/:id/revoke',
    {
      config: { permission: 'apiKeys:write' },
      schema: {
        ...common,
        summary: 'Revoke an API key of the tree now',
        description:
          'The key is refused from now on (in other API processes within AUTH_CACHE_TTL_MS), a rotated key’s grace period ' +
          'included. Another tree’s key is 404; a key already revoked or expired is 409.',
        params: IdParamsSchema,
        response: { 200: ApiKeySchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'API_KEY_ALREADY_REVOKED') },
      },
    },
    async (request) => presentApiKey(await revokeApiKeyOfTree(deps, principalOf(request), request.params.id)),
  )
}

export default apiKeyRoutes
