// JSON request bodies: parsed by Fastify's own parser (prototype-poisoning protection included), then refused
// when an object repeats a key. JSON.parse keeps the last of two values silently, so {"amount": 1, "amount": 100}
// would mean whatever the last writer said; a money API says which key is repeated instead.
import type { FastifyInstance } from 'fastify'
import { visit, type JSONPath } from 'jsonc-parser'
import { AppError } from '../errors.js'
import type { HttpErrorCode } from './errors.js'

const pointer = (path: JSONPath, key: string): string =>
  [...path, key].map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

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
      const duplicate = findDuplicateKey(body as string)
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
