// The Hub's browser code: the bundle hub/build.mjs writes to dist/hub (hashed file names, a manifest naming the
// entry's script and stylesheet), read once into memory; looked for again while it is not built.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PublicFile } from './public-files.js'

export interface HubBundle {
  script: string
  stylesheet: string
  /** Files by name (app-<hash>.js, .css, .js.map): never change, so they are cached for good. */
  files: ReadonlyMap<string, PublicFile>
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
}

export function defaultHubDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'dist', 'hub')
}

function loadBundle(dir: string): HubBundle | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { script: string; stylesheet: string }
    const files = new Map<string, PublicFile>()
    for (const name of readdirSync(join(dir, 'assets'))) {
      const type = CONTENT_TYPES[name.slice(name.lastIndexOf('.'))]
      if (!type) continue
      const body = readFileSync(join(dir, 'assets', name))
      files.set(name, { body, contentType: type, etag: `"${createHash('sha384').update(body).digest('base64url')}"` })
    }
    return files.has(manifest.script) && files.has(manifest.stylesheet) ? { ...manifest, files } : undefined
  } catch {
    return undefined
  }
}

export class HubAssets {
  #bundle: HubBundle | undefined

  constructor(private readonly dir: string = defaultHubDir()) {
    this.#bundle = loadBundle(dir)
  }

  bundle(): HubBundle | undefined {
    this.#bundle ??= loadBundle(this.dir)
    return this.#bundle
  }
}
