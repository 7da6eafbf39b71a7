// Running the real CLI and server as child processes (through tsx, as `npm run cli` / `npm run dev` do).
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
// Child processes run outside the repository so that a developer's ./.env cannot leak into tests.
const workDir = mkdtempSync(join(tmpdir(), 'canopy-proc-'))
const tsxLoader = join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')

// Metrics off unless a test asks for them (METRICS_PORT, see freePort), so parallel servers never share a port.
const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', METRICS_PORT: '0' }
  return env
}

/** A loopback port that was free a moment ago (for a child's METRICS_PORT, where 0 means "off"). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  json: () => any // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', tsxLoader, join(repoRoot, 'src/cli/main.ts'), ...args],
      {
        cwd: workDir,
        env: { ...baseEnv(), ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) })
      },
    )
  })
}

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams
  output: () => string
  /** Resolves with the base URL once the server logs that it listens. */
  ready: Promise<string>
  exited: Promise<number | null>
}

export function startServer(env: Record<string, string>, entry = 'src/server.ts'): ServerProcess {
  const child = spawn(process.execPath, ['--import', tsxLoader, join(repoRoot, entry)], {
    cwd: workDir,
    env: { ...baseEnv(), LOG_LEVEL: 'info', PORT: '0', ...env },
  })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const ready = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match?.[1]) resolve(match[1])
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${output}`)))
  })
  ready.catch(() => {})
  return { child, output: () => output, ready, exited }
}
