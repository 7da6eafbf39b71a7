// pino options for Fastify: secrets and e-mail addresses are redacted, URLs are logged without query strings.
import type { FastifyServerOptions } from 'fastify'
import type { DestinationStream } from 'pino'

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'apiKey',
  'clientSecret',
  'consumerEmail',
  'email',
  'to',
  '*.authorization',
  '*.apiKey',
  '*.clientSecret',
  '*.consumerEmail',
  '*.email',
  '*.to',
]

export function loggerOptions(level: string, stream?: DestinationStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    serializers: {
      req(request: { method: string; url: string; originalUrl?: string; ip?: string }) {
        // Query strings are dropped: they are never a place for secrets, but a client may still put one there.
        return { method: request.method, path: (request.originalUrl ?? request.url).split('?')[0], remoteAddress: request.ip }
      },
    },
  }
}
