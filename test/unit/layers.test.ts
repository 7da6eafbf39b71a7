// The layers of docs/architecture.md, checked on the source: imports only go down (routes → http → services →
// db → domain), and no module imports itself back through others (a cycle makes load order matter).
import { readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importSpecifiers, sourceFiles, stripComments } from '../helpers/source-imports.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Rank of each layer: a module may import from its own rank or below. Top-level modules are outside the ranks. */
const LAYERS: Record<string, number> = { domain: 1, db: 2, services: 3, http: 4, routes: 5 }

const layerOf = (file: string): string | undefined => {
  const [first, second] = relative(SRC, file).split('/')
  return second === undefined ? undefined : first
}

/** Every module of src with the modules of src it imports (relative specifiers, `.js` resolved to `.ts`). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC)
  const known = new Set(files)
  return new Map(
    files.map((file) => {
      const targets = importSpecifiers(stripComments(readFileSync(file, 'utf8')))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => join(dirname(file), specifier).replace(/\.js$/, '.ts'))
        .filter((target) => known.has(target))
      return [file, targets]
    }),
  )
}

/** The cycles of a graph, each as the path that closes it (depth-first; one per back edge). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (node: string): void => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of graph.keys()) if (!state.has(node)) visit(node)
  return cycles
}

describe('the layers of src', () => {
  const graph = importGraph()
  const show = (file: string) => relative(SRC, file)

  it('has no import cycle', () => {
    expect(graph.size).toBeGreaterThan(50)
    expect([...graph.values()].flat().length).toBeGreaterThan(200)
    expect(cyclesOf(graph).map((cycle) => cycle.map(show).join(' → '))).toEqual([])
  })

  it('finds a cycle when there is one (the check itself)', () => {
    const cyclic = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ])
    expect(cyclesOf(cyclic)).toEqual([['a', 'b', 'c', 'a']])
  })

  it('only imports downwards: routes → http → services → db → domain', () => {
    const upward: string[] = []
    for (const [file, targets] of graph) {
      const from = LAYERS[layerOf(file) ?? '']
      if (from === undefined) continue
      for (const target of targets) {
        const to = LAYERS[layerOf(target) ?? '']
        if (to !== undefined && to > from) upward.push(`${show(file)} → ${show(target)}`)
      }
    }
    expect(upward).toEqual([])
  })
})
