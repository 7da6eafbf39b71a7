// Wire schemas shared by routes.
import { Type, type TSchema } from '@sinclair/typebox'
import { ErrorBodySchema } from './errors.js'

export const UuidSchema = Type.String({ format: 'uuid', description: 'UUID' })
export const CountryCodeSchema = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 3166-1 alpha-3, upper case' })
export const CurrencyCodeSchema = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper case' })
export const MccSchema = Type.String({ pattern: '^[0-9]{4}$', description: 'Merchant Category Code, 4 digits' })

export const text = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, ...(description ? { description } : {}) })
export const optionalText = (maxLength: number) => Type.Optional(Type.String({ maxLength }))

export const AddressSchema = Type.Object(
  {
    line1: text(200),
    line2: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    line3: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    city: text(100),
    postalCode: text(20),
    state: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    countryCode: CountryCodeSchema,
  },
  { additionalProperties: false },
)

export const IdParamsSchema = Type.Object({ id: UuidSchema }, { additionalProperties: false })

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing or invalid API key',
  403: "Organisation outside the key's tree",
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Rate limited',
  500: 'Internal error',
  503: 'Unavailable',
}

/** Response schemas for the given error statuses, all in the one error shape. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const status of [...statuses, 429, 500]) {
    out[status] = { ...ErrorBodySchema, description: ERROR_DESCRIPTIONS[status] ?? 'Error' }
  }
  return out
}

export const bearerSecurity = [{ bearerAuth: [] }]
