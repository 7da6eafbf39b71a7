// The Hub's pages: one HTML document for every /hub path (the browser code routes), and its hashed assets. Served
// with a Content-Security-Policy without 'unsafe-inline' that forbids framing, and no Referer (a set-password link
// must not leak).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError, notFound } from '../../errors.js'
import type { HubAssets } from '../../services/hub-assets.js'

export const HUB_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

const securityHeaders = (reply: FastifyReply) =>
  reply
    .header('content-security-policy', HUB_CSP)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin')

const document = (script: string, stylesheet: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Canopy Hub</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/hub/assets/${stylesheet}">
<script type="module" src="/hub/assets/${script}"></script>
</head>
<body>
<div id="app"><p class="loading">Loading the Canopy Hub…</p></div>
<noscript>The Canopy Hub needs JavaScript.</noscript>
</body>
</html>
`

const hubPageRoutes: FastifyPluginAsyncTypebox<{ assets: HubAssets }> = async (app, { assets }) => {
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.url.startsWith('/hub/api/') || request.url.startsWith('/hub/assets/'))
      throw notFound(`route ${request.method} ${request.url.split('?')[0]}`)
    const bundle = assets.bundle()
    if (!bundle) throw new AppError('NOT_FOUND', 'the hub is not built on this deployment: run npm run build')
    return securityHeaders(reply)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(document(bundle.script, bundle.stylesheet))
  }
  const hide = { hide: true }
  app.get('/hub', { schema: hide }, page)
  app.get('/hub/*', { schema: hide }, page)

  app.get(
    '/hub/assets/:file',
    { schema: { ...hide, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const file = assets.bundle()?.files.get(request.params.file)
      if (!file) throw notFound('file')
      // Hashed names: a file never changes, so it is cached for good.
      return securityHeaders(reply)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', file.etag)
        .type(file.contentType)
        .send(file.body)
    },
  )
}

export default hubPageRoutes
