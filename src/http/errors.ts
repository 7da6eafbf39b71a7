// One error shape for every response, and one table from error code to HTTP status.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { DomainError, type DomainErrorCode } from '../domain/errors.js'
import { AppError, type AppErrorCode, type ErrorDetail } from '../errors.js'

export type ErrorCode = AppErrorCode | DomainErrorCode

export const STATUS_BY_CODE = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  SESSION_EXPIRED: 410,
  REQUEST_ENTITY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE_ENTITY: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_USE: 409,
  ALREADY_REVERSED: 409,
  TOO_MANY_REQUESTS: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_SERVER_ERROR: 500,
  UNSUPPORTED_CURRENCY: 400,
  UNKNOWN_COUNTRY: 400,
  UNKNOWN_SUBDIVISION: 400,
  INVALID_MCC: 400,
  AMOUNT_PRECISION: 400,
  AMOUNT_OUT_OF_RANGE: 400,
  AMOUNT_TOO_SMALL: 400,
  MCC_REQUIRED: 400,
  NO_CREDITS_IN_QUOTE: 400,
  IMPACT_PARTNER_NOT_FOUND: 400,
  NO_CREDIT_PROJECTS: 422,
  NO_CONTRIBUTION_PARTNERS: 422,
} as const satisfies Record<ErrorCode, number>

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'Lowercase human-readable sentence' }),
    code: Type.String({ description: 'Stable UPPER_SNAKE code' }),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    requestId: Type.String(),
  },
  { $id: 'Error', title: 'Error' },
)

export interface ErrorBody {
  error: string
  code: ErrorCode
  details?: ErrorDetail[]
  requestId: string
}

interface AjvError {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
}

const describeAjvError = (error: AjvError, context: string | undefined): ErrorDetail => {
  const base = context && context !== 'body' ? `/${context}${error.instancePath}` : error.instancePath
  if (error.keyword === 'additionalProperties') {
    return { path: `${base}/${String(error.params.additionalProperty)}`, message: 'is not a known property' }
  }
  if (error.keyword === 'required') {
    return { path: `${base}/${String(error.params.missingProperty)}`, message: 'is required' }
  }
  return { path: base || '/', message: error.message ?? 'is invalid' }
}

const pointerToText = (path: string): string =>
  path === '/' || path === '' ? 'request body' : path.replace(/^\//, '').replaceAll('/', '.')

export function validationError(errors: readonly AjvError[], context: string | undefined): AppError {
  const details = errors.map((e) => describeAjvError(e, context))
  const first = details[0]
  const message = first ? `${pointerToText(first.path)} ${first.message}` : 'request is invalid'
  return new AppError('BAD_REQUEST', message.toLowerCase(), details)
}

/** Turns anything thrown into [status, body]. Unknown errors become a 500 that reveals nothing. */
export function toErrorResponse(error: unknown, requestId: string): { status: number; body: ErrorBody; internal: boolean } {
  if (error instanceof AppError || error instanceof DomainError) {
    const details = error instanceof AppError ? error.details : error.path ? [{ path: error.path, message: error.message }] : []
    return {
      status: STATUS_BY_CODE[error.code],
      body: { error: error.message, code: error.code, ...(details.length ? { details } : {}), requestId },
      internal: false,
    }
  }
  const fastifyError = error as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string }
  if (fastifyError.validation) {
    return toErrorResponse(validationError(fastifyError.validation, fastifyError.validationContext), requestId)
  }
  const mapped = mapFastifyError(fastifyError)
  if (mapped) return toErrorResponse(mapped, requestId)
  return {
    status: 500,
    body: { error: 'internal server error', code: 'INTERNAL_SERVER_ERROR', requestId },
    internal: true,
  }
}

function mapFastifyError(error: Partial<FastifyError>): AppError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('REQUEST_ENTITY_TOO_LARGE', 'request body is too large')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'content type must be application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('BAD_REQUEST', 'request body is empty but content type is application/json')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('BAD_REQUEST', 'request body is not valid json')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('BAD_REQUEST', 'content-length does not match the body')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new AppError('BAD_REQUEST', 'request url is invalid')
    default:
      break
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && (error as Error).name === 'SyntaxError')) {
    return new AppError('BAD_REQUEST', 'request body is not valid json')
  }
  if (error.statusCode === 429) return new AppError('TOO_MANY_REQUESTS', 'too many requests, slow down')
  if (error.statusCode === 503) return new AppError('SERVICE_UNAVAILABLE', 'service is unavailable, retry later')
  if (isPoolTimeout(error)) return new AppError('SERVICE_UNAVAILABLE', 'service is busy, retry later')
  if ((typeof error.code === 'string' && DATABASE_UNAVAILABLE.has(error.code)) || isConnectionLost(error)) {
    return new AppError('SERVICE_UNAVAILABLE', 'database is unavailable, retry later')
  }
  return undefined
}

/**
 * Connection-level failures (socket errors and Postgres' SQLSTATE classes 08, 53300, 57P0x) and
 * statements cancelled by statement_timeout (57014): retryable, not a bug. ETIMEDOUT is also the
 * code of DatabaseTimeoutError (src/db/connect.ts): a statement without an answer within
 * DATABASE_QUERY_TIMEOUT_MS.
 */
const DATABASE_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57014',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  '57P01',
  '57P02',
  '57P03',
])

const isPoolTimeout = (error: Partial<FastifyError>): boolean =>
  typeof error.message === 'string' &&
  /timeout exceeded when trying to connect|Connection terminated due to connection timeout/.test(error.message)

/** pg's errors (no code) for a connection that ended under a statement, or was used after that. */
const isConnectionLost = (error: Partial<FastifyError>): boolean =>
  typeof error.message === 'string' && /^Connection terminated|^Client has encountered a connection error/.test(error.message)

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body, internal } = toErrorResponse(error, request.id)
    if (internal) request.log.error({ err: error }, 'unhandled error')
    else if (status >= 500) request.log.warn({ err: error }, body.error)
    if (status === 503) reply.header('retry-after', '1')
    return reply.code(status).type('application/json; charset=utf-8').send(body)
  })
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const body: ErrorBody = {
      error: `route ${request.method} ${request.originalUrl.split('?')[0]} not found`,
      code: 'NOT_FOUND',
      requestId: request.id,
    }
    return reply.code(404).send(body)
  })
}
