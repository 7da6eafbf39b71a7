// How the server is started: `npm start`'s command (package.json), which the Dockerfile's CMD repeats
// (test/unit/deploy-files.test.ts). The bench and the demo start it with the same Node flags.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const SERVER_ENTRY = 'dist/src/server.js'

/** The Node flags of package.json's start script, `node [flags] dist/src/server.js`, in the checkout at `root`. */
export function serverNodeFlags(root: string): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  const words = start.split(/\s+/)
  const entry = words.indexOf(SERVER_ENTRY)
  if (words[0] !== 'node' || entry < 0) throw new Error(`package.json's start script is not "node [flags] ${SERVER_ENTRY}": ${start}`)
  return words.slice(1, entry)
}
