// npm run bench:spread: how much identical API processes differ. One group's database (bench/scenarios.ts), then
// SPREAD_PROCESSES API processes one after another, each with the next of SPREAD_VARIANTS in turn (Node flags after
// `npm start`'s, as the bench runs them, or settings), each driven with one scenario for a warm-up and SPREAD_SLICES slices;
// per process: CPU per request in each slice, and from its `--trace-gc` lines over the slices, its collections and
// how much its old generation grew per scavenge. A full bench measures one process per group, so a process that is
// slow for its whole life moves that group's every figure (docs/write-costs.md, "One process in five: pretenuring").
import { fileURLToPath } from 'node:url'
import { loadBenchConfig, positive, variantParts } from './harness/config.js'
import { databaseUrl, migrateAndSeed, withClient } from './harness/database.js'
import { lineSplitter, parseGcLine, summariseGc, type GcEvent, type GcSummary } from './harness/gc-trace.js'
import { drive } from './harness/load.js'
import { cpuSecondsOf, startApi, stopService } from './harness/processes.js'
import { groups, type BenchGroup } from './scenarios.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const config = loadBenchConfig()

const processes = positive('SPREAD_PROCESSES', 12, true)
const connections = positive('SPREAD_CONNECTIONS', 20, true)
const slices = positive('SPREAD_SLICES', 3, true)
const sliceSeconds = positive('SPREAD_SLICE_SECONDS', 5, true)
const groupName = process.env.SPREAD_GROUP ?? 'core'
const scenarioName = process.env.SPREAD_SCENARIO ?? 'POST /quotes/carbon'
// '|'-separated variants, alternated: each is words, KEY=value for the API's environment (on top of the group's) and
// Node flags (after npm start's; a flag given again wins). '' is the API as the bench runs it.
const variants = (process.env.SPREAD_VARIANTS ?? '|--allocation-site-pretenuring').split('|').map((v) => v.trim())

function chosenGroup(): BenchGroup {
  const found = groups.find((g) => g.name === groupName)
  if (!found) throw new Error(`SPREAD_GROUP=${groupName}: no such group (${groups.map((g) => g.name).join(', ')})`)
  if (!found.scenarios.some((s) => s.name === scenarioName)) {
    throw new Error(`SPREAD_SCENARIO=${scenarioName}: not in group ${groupName} (${found.scenarios.map((s) => s.name).join('; ')})`)
  }
  return found
}
const group = chosenGroup()

interface ProcessResult {
  variant: string
  cpuMicrosPerRequest: number[]
  requestsPerSecond: number[]
  requests: number
  gc: GcSummary
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)

async function measureOne(url: string, variant: string): Promise<ProcessResult> {
  const parts = variantParts(variant)
  const events: GcEvent[] = []
  let recording = false
  const service = await startApi({
    name: 'api (spread)',
    cwd: root,
    databaseUrl: url,
    logLevel: config.logLevel,
    env: { ...group.env, ...parts.env },
    nodeArgs: [...parts.nodeArgs, '--trace-gc'],
    onOutput: lineSplitter((line) => {
      const event = parseGcLine(line)
      if (event) {
        if (recording) events.push(event)
      } else if (line.trim()) console.log(line)
    }),
  })
  try {
    const request = (await group.prepare(service.url)).get(scenarioName)
    if (!request) throw new Error(`group ${groupName} resolved no request for ${scenarioName}`)
    await drive(service.url, request, { connections, seconds: config.warmupSeconds })
    recording = true
    const cpu: number[] = []
    const rates: number[] = []
    let requests = 0
    for (let i = 0; i < slices; i++) {
      const before = cpuSecondsOf(service.child.pid) ?? 0
      const load = await drive(service.url, request, { connections, seconds: sliceSeconds })
      const after = cpuSecondsOf(service.child.pid) ?? 0
      cpu.push(((after - before) * 1e6) / Math.max(1, load.sent))
      rates.push(load.requestsPerSecond)
      requests += load.sent
    }
    recording = false
    return { variant, cpuMicrosPerRequest: cpu, requestsPerSecond: rates, requests, gc: summariseGc(events) }
  } finally {
    await stopService(service)
  }
}

async function main(): Promise<void> {
  const name = `canopy_spread_${Date.now().toString(36)}`
  await withClient(config.adminUrl, (client) => client.query(`CREATE DATABASE ${name}`))
  try {
    const url = databaseUrl(config.adminUrl, name)
    await migrateAndSeed(url, (db) => group.seed(db))
    console.log(
      `spread: ${processes} processes of group ${groupName}, ${scenarioName} at ${connections} connections, ` +
        `${config.warmupSeconds} s warm-up + ${slices} × ${sliceSeconds} s; Node ${process.version}; variants: ${variants.map((v) => v || '(npm start)').join(' | ')}\n`,
    )
    console.log('| # | variant | CPU µs/req per slice | req/s | scavenges | scavenge ms / 1k req | mark-compacts | MB kept per scavenge |')
    console.log('|---|---|---|---|---:|---:|---:|---:|')
    const results: ProcessResult[] = []
    for (let i = 0; i < processes; i++) {
      const variant = variants[i % variants.length] as string
      const r = await measureOne(url, variant)
      results.push(r)
      console.log(
        `| ${i} | ${variant || '(npm start)'} | ${r.cpuMicrosPerRequest.map((x) => x.toFixed(0)).join(' / ')} | ` +
          `${r.requestsPerSecond.join(' / ')} | ${r.gc.scavenges} | ${((r.gc.scavengeMs * 1000) / r.requests).toFixed(1)} | ` +
          `${r.gc.markCompacts} | ${r.gc.oldGrowthPerScavengeMb.toFixed(2)} |`,
      )
    }
    console.log('\n| variant | processes | CPU µs/req: mean (min–max of process means) | MB kept per scavenge (min–max) |')
    console.log('|---|---:|---|---|')
    for (const variant of variants) {
      const mine = results.filter((r) => r.variant === variant)
      const cpu = mine.map((r) => mean(r.cpuMicrosPerRequest))
      const kept = mine.map((r) => r.gc.oldGrowthPerScavengeMb)
      console.log(
        `| ${variant || '(npm start)'} | ${mine.length} | ${mean(cpu).toFixed(1)} (${Math.min(...cpu).toFixed(0)}–${Math.max(...cpu).toFixed(0)}) | ` +
          `${Math.min(...kept).toFixed(2)}–${Math.max(...kept).toFixed(2)} |`,
      )
    }
  } finally {
    await withClient(config.adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {})
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
