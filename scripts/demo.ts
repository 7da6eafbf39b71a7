// npm run demo: the API on the embedded database and the demo shop (examples/shop) on its own origin, allowed to
// read the demo organisation's sessions. Builds first when dist/ is missing or older than the sources. Ctrl-C
// stops both. Ports: PORT (API, default 3000) and SHOP_PORT (default 4000); DATA_DIR as for npm start.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startShop } from '../examples/shop/server.js'
import { SERVER_ENTRY, serverNodeFlags } from './server-command.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const apiPort = Number(process.env.PORT || 3000)
const shopPort = Number(process.env.SHOP_PORT || 4000)
const dataDir = process.env.DATA_DIR || '.data'
const apiBase = `http://127.0.0.1:${apiPort}`
// Another host as well as another port: the shop is a different origin in every respect.
const shopOrigin = `http://localhost:${shopPort}`

function newest(dir: string): number {
  if (!existsSync(dir)) return 0
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((entry) =>
      entry.isDirectory() ? newest(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs,
    ),
  )
}

function buildIfNeeded(): void {
  const outputs = [join(root, SERVER_ENTRY), join(root, 'dist/sdk/manifest.json'), join(root, 'dist/hub/manifest.json')]
  const built = Math.min(...outputs.map((file) => (existsSync(file) ? statSync(file).mtimeMs : 0)))
  const sources = Math.max(...['src', 'migrations', 'sdk/src', 'hub/src'].map((dir) => newest(join(root, dir))))
  if (built > sources) return
  console.log('demo: building (npm run build)…')
  const result = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

async function waitForApi(exited: () => boolean): Promise<void> {
  for (let i = 0; i < 240 && !exited(); i++) {
    try {
      if ((await fetch(`${apiBase}/readyz`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`the API did not become ready on ${apiBase}`)
}

buildIfNeeded()
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PORT: String(apiPort),
  HOST: '127.0.0.1',
  DATA_DIR: dataDir,
  DEMO_BOOTSTRAP: 'true',
  DEMO_ALLOWED_ORIGINS: shopOrigin,
  // Four weeks of allocations and reversals, so that summaries (and the Hub's dashboard) have something to show.
  DEMO_ACTIVITY: 'true',
  OPERATOR_LEGAL_NAME: process.env.OPERATOR_LEGAL_NAME || 'Canopy Demo Operator Ltd',
}
delete env.DATABASE_URL // the demo always runs on the embedded database
const api = spawn(process.execPath, [...serverNodeFlags(root), SERVER_ENTRY], {
  cwd: root,
  env,
  stdio: 'inherit',
})
let apiExited = false
api.on('exit', (code) => {
  apiExited = true
  if (!stopping) {
    console.error(`demo: the API exited (${code})`)
    process.exit(code || 1)
  }
})

let stopping = false
let shop: Awaited<ReturnType<typeof startShop>> | undefined = undefined
async function stop(code = 0): Promise<void> {
  if (stopping) return
  stopping = true
  await shop?.close()
  if (!apiExited) {
    api.kill('SIGTERM')
    await new Promise((resolve) => api.once('exit', resolve))
  }
  process.exit(code)
}
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())

await waitForApi(() => apiExited)
const credentialsFile = resolve(root, dataDir, 'demo-credentials.json')
if (!existsSync(credentialsFile)) {
  console.error(`demo: ${credentialsFile} is missing: the data directory was not created by the demo bootstrap. Use another DATA_DIR.`)
  await stop(1)
}
const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as { organisationId: string; apiKey: string }
shop = await startShop({ apiBase, organisationId: credentials.organisationId, apiKey: credentials.apiKey, port: shopPort })
console.log(`\nCanopy demo shop: ${shop.url}   (API ${apiBase}; Ctrl-C stops both)\n`)
