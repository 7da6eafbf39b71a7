// Running the real CLI and server as child processes. Servers run through tsx, as `npm run dev` does. The CLI is
// compiled once per test process by esbuild into one module next to node_modules (so its dependencies resolve as
// they do from the sources), and each command runs it with plain node: the code `npm run cli` runs through tsx,
// without tsx's second of start-up per process (the CLI test starts some sixty processes).
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
// Child processes run outside the repository so that a developer's ./.env cannot leak into tests.
const workDir = mkdtempSync(join(tmpdir(), 'canopy-proc-'))
const tsxLoader = join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')
const compiledDir = join(repoRoot, 'node_modules', '.cache', 'canopy-test-entries')
const compiled = new Map<string, Promise<string>>()

/** The entry (a path from the repository's root) bundled into one ES module; dependencies stay in node_modules. */
function compiledEntry(entry: string): Promise<string> {
  let path = compiled.get(entry)
  if (!path) {
    path = build({
      entryPoints: [join(repoRoot, entry)],
      write: false,
      outfile: join(compiledDir, 'entry.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
      // Packages stay external (resolved from node_modules at run time), except JSON files, whose import attributes
      // an external import would lose.
      plugins: [
        {
          name: 'packages-external',
          setup(builder) {
            builder.onResolve({ filter: /^[^./]/ }, (args) =>
              args.path.endsWith('.json') ? undefined : { path: args.path, external: true },
            )
          },
        },
      ],
    }).then(({ outputFiles }) => {
      const contents = outputFiles[0]?.contents
      if (!contents) throw new Error(`esbuild wrote nothing for ${entry}`)
      // Named by its content: test files compiling at once write the same bytes (each through its own temporary
      // name, then an atomic rename), and a run reuses the file of an earlier run until the sources change.
      const hash = createHash('sha256').update(contents).digest('hex').slice(0, 16)
      const outfile = join(compiledDir, `${entry.replace(/[^A-Za-z0-9]+/g, '-')}-${hash}.mjs`)
      if (!existsSync(outfile)) {
        mkdirSync(compiledDir, { recursive: true })
        const partial = `${outfile}.${process.pid}.tmp`
        writeFileSync(partial, contents)
        renameSync(partial, outfile)
      }
      return outfile
    })
    compiled.set(entry, path)
  }
  return path
}

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

export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const cli = await compiledEntry('src/cli/main.ts')
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
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
