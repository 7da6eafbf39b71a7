// What a process's `--trace-gc` lines say about its collections: how many of each kind, their pause time, and how much
// the heap kept after each scavenge beyond what the one before kept (bytes promoted to, or allocated straight into, the
// old generation between them). Pure: bench/process-spread.ts feeds it the API's standard output.

export interface GcEvent {
  /** Milliseconds since the process started, as V8 prints it. */
  atMs: number
  kind: 'scavenge' | 'mark-compact'
  /** Heap in use before and after, MB. */
  beforeMb: number
  afterMb: number
  /** The main thread's pause, ms. */
  pauseMs: number
}

// Node 20: "[123:0x5f…]  8688 ms: Scavenge 59.5 (109.4) -> 50.8 (109.4) MB, 2.88 / 0.01 ms  (…"
// Node 24 adds "pooled: 0 MB, " before the pause.
const LINE =
  /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: (Scavenge|Mark-Compact|Mark-Compact \(reduce\)) ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/

/** The collection a `--trace-gc` line reports, or undefined for any other line. */
export function parseGcLine(line: string): GcEvent | undefined {
  const match = LINE.exec(line.trim())
  if (!match) return undefined
  const [, at, kind, before, after, pause] = match
  return {
    atMs: Number(at),
    kind: kind === 'Scavenge' ? 'scavenge' : 'mark-compact',
    beforeMb: Number(before),
    afterMb: Number(after),
    pauseMs: Number(pause),
  }
}

export interface GcSummary {
  scavenges: number
  scavengeMs: number
  markCompacts: number
  markCompactMs: number
  /**
   * Mean growth of the heap kept from one scavenge to the next, MB (pairs with a mark-compact between them are left
   * out): what outlived the young generation, or was allocated in the old one, meanwhile.
   */
  oldGrowthPerScavengeMb: number
}

export function summariseGc(events: readonly GcEvent[]): GcSummary {
  let scavenges = 0
  let scavengeMs = 0
  let markCompacts = 0
  let markCompactMs = 0
  let growth = 0
  let pairs = 0
  let keptAfterLastScavenge: number | undefined
  for (const event of events) {
    if (event.kind === 'mark-compact') {
      markCompacts++
      markCompactMs += event.pauseMs
      keptAfterLastScavenge = undefined
      continue
    }
    scavenges++
    scavengeMs += event.pauseMs
    if (keptAfterLastScavenge !== undefined) {
      growth += event.afterMb - keptAfterLastScavenge
      pairs++
    }
    keptAfterLastScavenge = event.afterMb
  }
  return { scavenges, scavengeMs, markCompacts, markCompactMs, oldGrowthPerScavengeMb: pairs ? growth / pairs : 0 }
}

/** Splits a stream's chunks into whole lines. */
export function lineSplitter(onLine: (line: string) => void): (chunk: string) => void {
  let rest = ''
  return (chunk) => {
    const lines = (rest + chunk).split('\n')
    rest = lines.pop() ?? ''
    for (const line of lines) onLine(line)
  }
}
