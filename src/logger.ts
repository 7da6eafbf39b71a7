// pino options for Fastify: secrets and e-mail addresses are redacted, URLs are logged without query strings; each
// request's child logger is made only when the request logs.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions, DestinationStream, Logger } from 'pino'

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

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/**
 * A request's logger, made on its first line at an enabled level. Fastify gives every request a child logger bound
 * to its id, and pino builds a child's bindings (serialised and redacted) when it is made: about 3 KB and a few
 * microseconds per request, for a logger most requests never write to at the usual levels (docs/write-costs.md,
 * "A request's own logger, made when it logs").
 */
class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options))
  }

  private write(level: LevelName, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return
    ;(this.logger[level] as (...values: unknown[]) => void)(...args)
  }

  get level(): string {
    return this.made?.level ?? this.parent.level
  }

  set level(level: string) {
    this.logger.level = level
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args)
  }
  error(...args: unknown[]): void {
    this.write('error', args)
  }
  warn(...args: unknown[]): void {
    this.write('warn', args)
  }
  info(...args: unknown[]): void {
    this.write('info', args)
  }
  debug(...args: unknown[]): void {
    this.write('debug', args)
  }
  trace(...args: unknown[]): void {
    this.write('trace', args)
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options)
  }
}

/** Fastify's childLoggerFactory: a request logger made when it first logs (RequestLogger); at once for a route's own level. */
export const requestLoggerFactory = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
  options.level !== undefined || options.serializers !== undefined
    ? logger.child(bindings, options)
    : new RequestLogger(logger as Logger, bindings, options)
