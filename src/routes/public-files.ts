// The browser SDK's script (docs/sdk.md) and the demo partner images: public, static, cacheable files.
//   GET /js/v3/canopy.js       evergreen within major version 3: short cache, so fixes reach pages within minutes
//   GET /js/v3.0.0/canopy.js   this exact version, never changes: cached for a year, `immutable`; use it with SRI
// Both answer `Access-Control-Allow-Origin: *`: a page that loads the script with crossorigin="anonymous" (as
// Subresource Integrity requires) must be able to read it, whatever its origin. These are public files with no
// credentials; `*` is never sent by any API route (src/http/cors.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError, notFound } from '../errors.js'
import { errorResponses } from '../http/schemas/common.js'
import type { PublicFile, PublicFiles } from '../services/public-files.js'

export const EVERGREEN_CACHE = 'public, max-age=300'
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable'
const IMAGE_CACHE = 'public, max-age=86400'

function sendFile(request: FastifyRequest, reply: FastifyReply, file: PublicFile, cacheControl: string, cors: boolean) {
  reply
    .header('cache-control', cacheControl)
    .header('etag', file.etag)
    .header('x-content-type-options', 'nosniff')
    // Pages that isolate themselves (Cross-Origin-Embedder-Policy) may load these too.
    .header('cross-origin-resource-policy', 'cross-origin')
  if (cors) reply.header('access-control-allow-origin', '*')
  const ifNoneMatch = request.headers['if-none-match']
  if (typeof ifNoneMatch === 'string' && ifNoneMatch.split(',').some((tag) => tag.trim() === file.etag)) {
    return reply.code(304).send()
  }
  return reply.type(file.contentType).send(file.body)
}

const binary = (contentType: string, description: string) => ({
  description,
  content: { [contentType]: { schema: { type: 'string' } } },
})

const publicFileRoutes: FastifyPluginAsyncTypebox<{ files: PublicFiles }> = async (app, { files }) => {
  app.get(
    '/js/:version/:file',
    {
      schema: {
        tags: ['browser SDK'],
        summary: 'The browser SDK script',
        description:
          '`/js/v3/canopy.js` is evergreen within major version 3 (`Cache-Control: public, max-age=300`); ' +
          '`/js/v<version>/canopy.js` is that exact version and never changes (`max-age=31536000, immutable`): use it with ' +
          'Subresource Integrity (`integrity="sha384-…" crossorigin="anonymous"`). Also `canopy.js.map`. Both answer ' +
          '`Access-Control-Allow-Origin: *` (public files; no API route ever does). 404 for other versions, or when the ' +
          'SDK is not built on this deployment.',
        params: Type.Object({ version: Type.String({ maxLength: 40 }), file: Type.String({ maxLength: 40 }) }),
        response: {
          200: binary('text/javascript', 'The script (or its source map)'),
          304: { type: 'null', description: 'Not modified (If-None-Match)' },
          ...errorResponses('NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const sdk = files.sdk()
      if (!sdk) throw new AppError('NOT_FOUND', 'the browser sdk is not built on this deployment: run npm run build')
      const { version, file: name } = request.params
      const file = sdk.files.get(name)
      const cache = version === sdk.versioned ? IMMUTABLE_CACHE : version === sdk.evergreen ? EVERGREEN_CACHE : undefined
      if (!file || !cache) throw notFound('script')
      return sendFile(request, reply, file, cache, true)
    },
  )

  app.get(
    '/demo/images/:file',
    {
      schema: {
        tags: ['browser SDK'],
        summary: "The demo catalogue's partner images",
        description: 'The images the illustrative demo catalogue names (`/demo/images/<partner>-<group>.png`), made for Canopy.',
        params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
        response: {
          200: binary('image/png', 'A PNG image'),
          304: { type: 'null', description: 'Not modified (If-None-Match)' },
          ...errorResponses('NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const file = files.demoImages.get(request.params.file)
      if (!file) throw notFound('image')
      return sendFile(request, reply, file, IMAGE_CACHE, false)
    },
  )
}

export default publicFileRoutes
