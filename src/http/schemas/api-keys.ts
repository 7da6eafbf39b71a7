// Wire schemas of API keys: what a key of an organisation tree may see and do with the keys of that tree.
import { Type, type Static } from '@sinclair/typebox'
import { DEFAULT_EXPIRE_OLD_IN_SECONDS, MAX_EXPIRE_OLD_IN_SECONDS } from '../../services/api-keys.js'
import { nullable, stringEnum, UuidSchema } from './common.js'

const KeyModeSchema = stringEnum(['live', 'test'] as const, 'live or test (a label: data is not partitioned by mode)')
const Timestamp = Type.String({ format: 'date-time' })

export const ApiKeySchema = Type.Object(
  {
    id: UuidSchema,
    organisationId: UuidSchema,
    mode: KeyModeSchema,
    prefix: Type.String({ description: 'The visible start of the key, for support (ck_live_AbCd1234)' }),
    createdAt: Timestamp,
    revokedAt: nullable(Timestamp),
    expiresAt: nullable({ ...Timestamp, description: 'After this instant the key is refused like a revoked key (set by rotation)' }),
    replacedByKeyId: nullable({ ...UuidSchema, description: 'The key that replaced this one when it was rotated' }),
    lastUsedAt: nullable({ ...Timestamp, description: 'When the key last authenticated, to the minute; null if never' }),
  },
  { title: 'ApiKey' },
)

export type ApiKeyResponse = Static<typeof ApiKeySchema>

export const CreatedApiKeySchema = Type.Object(
  { ...ApiKeySchema.properties, apiKey: Type.String({ description: 'The full key: shown once, never again' }) },
  { title: 'CreatedApiKey' },
)

export type CreatedApiKeyResponse = Static<typeof CreatedApiKeySchema>

export const RotatedApiKeySchema = Type.Object({ ...CreatedApiKeySchema.properties, previousKey: ApiKeySchema }, { title: 'RotatedApiKey' })

export type RotatedApiKeyResponse = Static<typeof RotatedApiKeySchema>

export const ApiKeyListSchema = Type.Object({ keys: Type.Array(ApiKeySchema) }, { title: 'ApiKeyList' })

export const CreateApiKeyBodySchema = Type.Object(
  {
    organisationId: { ...UuidSchema, description: "The key's organisation: the caller's own or a descendant" },
    mode: Type.Optional({ ...KeyModeSchema, description: "live or test; default: the calling key's mode" }),
  },
  { additionalProperties: false },
)

export const ListApiKeysQuerySchema = Type.Object(
  { organisationId: Type.Optional({ ...UuidSchema, description: "The caller's own organisation (default) or a descendant" }) },
  { additionalProperties: false },
)

export const RotateApiKeyBodySchema = Type.Object(
  {
    expireOldInSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_EXPIRE_OLD_IN_SECONDS,
        default: DEFAULT_EXPIRE_OLD_IN_SECONDS,
        description: `How long the old key keeps working: 0 (it stops now) to ${MAX_EXPIRE_OLD_IN_SECONDS} (30 days); default ${DEFAULT_EXPIRE_OLD_IN_SECONDS} (24 h)`,
      }),
    ),
  },
  { additionalProperties: false },
)
