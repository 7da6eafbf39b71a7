// The public files the API serves besides its JSON: the browser SDK's script bundle (dist/sdk/, written by
// sdk/build.mjs with its manifest) and the demo catalogue's partner images (assets/demo/images/). Read once into
// memory (a few tens of KB); a bundle missing at start-up (not built yet) is looked for again on the next request.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface PublicFile {
  body: Buffer
  contentType: string
  /** A strong validator: the SHA-384 of the body. */
  etag: string
}

export interface SdkBundle {
  version: string
  /** "v3" (evergreen within the major version) and "v3.0.0" (immutable). */
  evergreen: string
  versioned: string
  /** canopy.js and, when built, canopy.js.map. */
  files: ReadonlyMap<string, PublicFile>
}

export interface PublicFileDirs {
  /** The SDK build output, with manifest.json. */
  sdk: string
  demoImages: string
}

/** The folder of package.json above this file: the repository in development, /app in the image. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

export const defaultPublicFileDirs = (): PublicFileDirs => {
  const root = packageRoot()
  return { sdk: join(root, 'dist', 'sdk'), demoImages: join(root, 'assets', 'demo', 'images') }
}

const file = (body: Buffer, contentType: string): PublicFile => ({
  body,
  contentType,
  etag: `"${createHash('sha384').update(body).digest('base64url')}"`,
})

interface Manifest {
  version: string
  paths: { evergreen: string; versioned: string }
}

function loadSdk(dir: string): SdkBundle | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest
    const files = new Map([['canopy.js', file(readFileSync(join(dir, 'canopy.js')), 'text/javascript; charset=utf-8')]])
    if (existsSync(join(dir, 'canopy.js.map'))) {
      files.set('canopy.js.map', file(readFileSync(join(dir, 'canopy.js.map')), 'application/json; charset=utf-8'))
    }
    const segment = (path: string) => path.split('/')[2] ?? ''
    return { version: manifest.version, evergreen: segment(manifest.paths.evergreen), versioned: segment(manifest.paths.versioned), files }
  } catch {
    return undefined
  }
}

function loadImages(dir: string): Map<string, PublicFile> {
  if (!existsSync(dir)) return new Map()
  return new Map(
    readdirSync(dir)
      .filter((name) => /^[a-z0-9-]+\.png$/.test(name))
      .map((name) => [name, file(readFileSync(join(dir, name)), 'image/png')]),
  )
}

export class PublicFiles {
  #sdk: SdkBundle | undefined
  readonly demoImages: ReadonlyMap<string, PublicFile>

  constructor(private readonly dirs: PublicFileDirs = defaultPublicFileDirs()) {
    this.#sdk = loadSdk(dirs.sdk)
    this.demoImages = loadImages(dirs.demoImages)
  }

  /** The SDK bundle, or undefined while it is not built (npm run build writes it). */
  sdk(): SdkBundle | undefined {
    this.#sdk ??= loadSdk(this.dirs.sdk)
    return this.#sdk
  }
}
