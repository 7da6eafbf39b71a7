// The processes under test: the compiled API (one per scenario group, with the group's environment) and
// the baseline server (bench/baseline.ts). Each is sampled for resident memory for its whole life.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { SERVER_ENTRY, serverNodeFlags } from '../../scripts/server-command.js'

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })

/**
 * CPU seconds (user + system, all threads) a process has used, from /proc/<pid>/stat; /proc counts in
 * USER_HZ ticks, 100 per second on Linux. Undefined where /proc is not available.
 */
export function cpuSecondsOf(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

/** Peak VmRSS of a process, sampled every 100 ms from start to stop; `windowPeak` restarts with `markWindow`. */
export class RssSampler {
  private peakKb = 0
  private windowPeakKb = 0
  private readonly timer: NodeJS.Timeout

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 100)
    this.sample()
  }

  private sample(): void {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'))?.[1] ?? 0)
      this.peakKb = Math.max(this.peakKb, kb)
      this.windowPeakKb = Math.max(this.windowPeakKb, kb)
    } catch {
      /* the process is gone, or /proc is unavailable */
    }
  }

  markWindow(): void {
    this.sample()
    this.windowPeakKb = 0
  }

  /** MB since the last markWindow. */
  windowPeakMb(): number {
    this.sample()
    return Math.round(this.windowPeakKb / 1024)
  }

  peakMb(): number {
    this.sample()
    return Math.round(this.peakKb / 1024)
  }

  stop(): void {
    clearInterval(this.timer)
  }
}

export interface Service {
  name: string
  url: string
  child: ChildProcess
  rss: RssSampler
}

async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${url}: process exited (${child.exitCode ?? child.signalCode})`)
    try {
      await fetch(url)
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not come up within 30 s`)
}

export async function startService(options: {
  name: string
  cwd: string
  args: string[]
  env: NodeJS.ProcessEnv
  port: number
  readyPath: string
  /** Receives the process's standard output instead of this process's own (e.g. to read `--trace-gc` lines). */
  onOutput?: (text: string) => void
}): Promise<Service> {
  const { onOutput } = options
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd,
    stdio: ['ignore', onOutput ? 'pipe' : 'inherit', 'inherit'],
    env: options.env,
  })
  if (onOutput) child.stdout?.setEncoding('utf8').on('data', onOutput)
  const rss = new RssSampler(child.pid ?? 0)
  const url = `http://127.0.0.1:${options.port}`
  try {
    await waitForHttp(`${url}${options.readyPath}`, child)
  } catch (error) {
    rss.stop()
    child.kill('SIGKILL')
    throw error
  }
  return { name: options.name, url, child, rss }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export async function stopService(service: Service, graceMs = 5000): Promise<void> {
  service.rss.stop()
  const { child } = service
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

/**
 * The compiled API (`dist/src/server.js`, built by the bench's npm script) as every bench runs it: with `npm start`'s
 * Node flags (scripts/server-command.ts), on `databaseUrl`, a free port, the rate limit out of the way, a pool of 10,
 * metrics on a free port of their own, plus `env`. BENCH_NODE_ARGS adds Node flags after those (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/prof" to profile it; a flag given again there wins).
 */
export async function startApi(options: {
  name: string
  cwd: string
  databaseUrl: string
  logLevel: string
  env?: Record<string, string>
  onOutput?: (text: string) => void
  /** Node flags after `npm start`'s, instead of BENCH_NODE_ARGS. */
  nodeArgs?: string[]
}): Promise<Service> {
  const port = await freePort()
  return startService({
    name: options.name,
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
    cwd: options.cwd,
    args: [
      ...serverNodeFlags(options.cwd),
      ...(options.nodeArgs ?? (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)),
      SERVER_ENTRY,
    ],
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: options.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: options.logLevel,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      DATABASE_POOL_MAX: '10',
      METRICS_PORT: String(await freePort()),
      ...options.env,
    },
    port,
    readyPath: '/healthz',
  })
}
