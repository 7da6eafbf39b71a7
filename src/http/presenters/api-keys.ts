// API key → wire: never the key's hash; the full key only in the response that issues it.
import type { ApiKey, IssuedKey, RotatedKey } from '../../services/api-keys.js'
import type { ApiKeyResponse, CreatedApiKeyResponse, RotatedApiKeyResponse } from '../schemas/api-keys.js'

export const presentApiKey = (key: ApiKey): ApiKeyResponse => ({
  id: key.id,
  organisationId: key.organisationId,
  mode: key.mode,
  prefix: key.prefix,
  createdAt: key.createdAt.toISOString(),
  revokedAt: key.revokedAt ? key.revokedAt.toISOString() : null,
  expiresAt: key.expiresAt ? key.expiresAt.toISOString() : null,
  replacedByKeyId: key.replacedById,
  lastUsedAt: key.lastUsedAt ? key.lastUsedAt.toISOString() : null,
})

export const presentIssuedKey = (issued: IssuedKey): CreatedApiKeyResponse => ({ ...presentApiKey(issued.key), apiKey: issued.apiKey })

export const presentRotatedKey = (rotated: RotatedKey): RotatedApiKeyResponse => ({
  ...presentIssuedKey(rotated),
  previousKey: presentApiKey(rotated.previous),
})
