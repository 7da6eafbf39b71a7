// Wire primitives shared by every resource's schemas, and the error responses of routes.
import { Type, type TSchema } from '@sinclair/typebox'
import { ERROR_CODES, type ErrorCode } from '../errors.js'

/**
 * A UUID in its canonical hyphenated form, in either case; lower-cased while it is validated (ajv-keywords
 * `transform`), so every layer below compares one spelling. Not Ajv's `uuid` format: it also takes a
 * "urn:uuid:" prefix, which Postgres refuses.
 */
export const UuidSchema = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  transform: ['toLowerCase'],
  errorMessage: { pattern: 'must be a UUID', type: 'must be a UUID' },
  description: 'UUID',
})
export const CountryCodeSchema = Type.String({
  pattern: '^[A-Z]{3}$',
  errorMessage: { pattern: 'must be an ISO 3166-1 alpha-3 country code in capitals, e.g. GBR' },
  description: 'ISO 3166-1 alpha-3, upper case',
})
export const CurrencyCodeSchema = Type.String({
  pattern: '^[A-Z]{3}$',
  errorMessage: { pattern: 'must be an ISO 4217 currency code in capitals, e.g. GBP' },
  description: 'ISO 4217 code, upper case',
})
export const MccSchema = Type.String({
  pattern: '^[0-9]{4}$',
  errorMessage: { pattern: 'must be a merchant category code of 4 digits, e.g. 5992' },
  description: 'Merchant Category Code, 4 digits',
})

/** A field that may also be sent as null (treated as absent). */
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const text = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, ...(description ? { description } : {}) })
export const optionalText = (maxLength: number) => Type.Optional(Type.String({ maxLength }))

export const AddressSchema = Type.Object(
  {
    line1: text(200),
    line2: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
    line3: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
    city: text(100),
    postalCode: text(20),
    state: Type.Optional(nullable(Type.String({ maxLength: 100 }))),
    countryCode: CountryCodeSchema,
  },
  { additionalProperties: false },
)

export const IdParamsSchema = Type.Object({ id: UuidSchema }, { additionalProperties: false })

/** A string enum: one clear validation error ("must be equal to one of the allowed values") rather than a union's. */
export const stringEnum = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description })

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'Lowercase human-readable sentence' }),
    code: Type.String({ description: 'Stable UPPER_SNAKE code (see the error code table)' }),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    requestId: Type.String(),
  },
  { $id: 'Error', title: 'Error' },
)

/** Every route can answer these: an unexpected error, and 503 while the database is unavailable or the server shuts down. */
const ALWAYS: readonly ErrorCode[] = ['INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE']

/**
 * Response schemas for the error codes a route can answer, grouped by status, all in the one error shape.
 * Each status's description lists its codes and when they happen (from ERROR_CODES).
 */
export function errorResponses(...codes: ErrorCode[]): Record<number, TSchema> {
  // Every route that takes an API key may refuse it by its organisation's IP allowlist.
  const keyed: ErrorCode[] = codes.includes('UNAUTHORIZED') ? ['IP_NOT_ALLOWED'] : []
  return responsesFor([...codes, ...keyed, 'TOO_MANY_REQUESTS', ...ALWAYS])
}

/** The same, for the routes the rate limit does not apply to (health checks). */
export function unlimitedErrorResponses(...codes: ErrorCode[]): Record<number, TSchema> {
  return responsesFor([...codes, ...ALWAYS])
}

function responsesFor(codes: readonly ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) {
    const { status } = ERROR_CODES[code]
    const list = byStatus.get(status) ?? []
    if (!list.includes(code)) list.push(code)
    byStatus.set(status, list)
  }
  const out: Record<number, TSchema> = {}
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[status] = {
      ...ErrorBodySchema,
      // The codes this status can carry here, as an enum: typed clients derive their error types from it.
      properties: { ...ErrorBodySchema.properties, code: stringEnum(list, 'Stable UPPER_SNAKE code (see the error code table)') },
      description: list.map((code) => `\`${code}\`: ${ERROR_CODES[code].when}`).join('; '),
    }
  }
  return out
}

/**
 * `components.schemas.ErrorCode` of the OpenAPI document: every code the API can answer with (also those no route
 * lists, such as 408 and 431 from the HTTP parser), and `x-status`, its HTTP status. Typed clients read both.
 */
export const errorCodeComponent = () => ({
  type: 'string' as const,
  enum: Object.keys(ERROR_CODES),
  description: 'Every error code, in the `code` of an error body; `x-status` gives the HTTP status of each',
  'x-status': Object.fromEntries(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status])),
})

export const bearerSecurity = [{ bearerAuth: [] }]
