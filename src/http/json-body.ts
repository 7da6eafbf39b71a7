// JSON request bodies: parsed by Fastify's own parser (prototype-poisoning protection included), then refused
// when an object repeats a key. JSON.parse keeps the last of two values silently, so {"amount": 1, "amount": 100}
// would mean whatever the last writer said; a money API says which key is repeated instead.
import type { FastifyInstance } from 'fastify'
import { visit, type JSONPath } from 'jsonc-parser'
import { AppError } from '../errors.js'
import type { HttpErrorCode } from './errors.js'

const pointer = (path: JSONPath, key: string): string =>
  [...path, key].map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a

/** How many object keys valid JSON text writes: strings followed (after whitespace) by a colon. */
export function countKeysInText(text: string): number {
  let keys = 0
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== QUOTE) continue
    let end = i + 1
    while (text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1
    let next = end + 1
    while (next < text.length && text.charCodeAt(next) <= 0x20) next++
    if (text.charCodeAt(next) === COLON) keys++
    i = end
  }
  return keys
}

/** How many keys the parsed value holds, at every level (a repeated key is held once). */
export function countKeysInValue(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countKeysInValue(item), 0)
  let keys = 0
  for (const key in value) keys += 1 + countKeysInValue((value as Record<string, unknown>)[key])
  return keys
}

/** The JSON pointer of the first repeated key in `text` (already known to be valid JSON), if any. */
export function findDuplicateKey(text: string): string | undefined {
  const objects: Set<string>[] = []
  let duplicate: string | undefined
  visit(text, {
    onObjectBegin: () => {
      objects.push(new Set())
    },
    onObjectEnd: () => {
      objects.pop()
    },
    onObjectProperty: (key, _offset, _length, _line, _column, pathSupplier) => {
      const keys = objects[objects.length - 1]
      if (duplicate !== undefined || !keys) return
      if (keys.has(key)) duplicate = pointer(pathSupplier(), key)
      keys.add(key)
    },
  })
  return duplicate
}

export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error, value) => {
      if (error) return done(error)
      // Counting is a fraction of a full JSON walk; only a body with a repeated key pays for finding it.
      const repeats = countKeysInText(body as string) !== countKeysInValue(value)
      const duplicate = repeats ? findDuplicateKey(body as string) : undefined
      if (duplicate !== undefined) {
        return done(
          new AppError<HttpErrorCode>('BAD_REQUEST', 'request body repeats a key', [
            { path: duplicate, message: 'appears more than once in its object' },
          ]),
          undefined,
        )
      }
      done(null, value)
    })
  })
}
