// The generated contract files must be what the generator writes from the app's OpenAPI document today: a route,
// a field or an error code added to the API without regenerating fails here.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { onPostgres } from '../../../test/helpers/db.js'
import { buildOpenApiDocument, GENERATE_COMMAND, GENERATED_FILES, generatedFiles } from '../scripts/generate.js'
import { VERSION } from '../src/version.js'

const packageDir = new URL('..', import.meta.url)

describe('generated contract', () => {
  // No database involved (the document is built without one): run once, on the embedded run.
  it.skipIf(onPostgres())(
    `is up to date with the API's OpenAPI document (else: ${GENERATE_COMMAND})`,
    async () => {
      const expected = await generatedFiles(await buildOpenApiDocument())
      for (const file of GENERATED_FILES) {
        const committed = readFileSync(new URL(file, packageDir), 'utf8')
        expect(committed === expected[file], `${file} is stale: run ${GENERATE_COMMAND} and commit the result`).toBe(true)
      }
    },
    60_000,
  )

  it('sends the version of package.json in its User-Agent', () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(new URL('package.json', packageDir), 'utf8')).version)
  })
})
