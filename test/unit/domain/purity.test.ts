// src/domain is pure (docs/architecture.md): no framework, database, logging or Node I/O imports, no
// environment, clock or randomness. ESLint enforces it too; this test keeps it true without lint.
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importSpecifiers, sourceFiles, stripComments } from '../../helpers/source-imports.js'

const DOMAIN = fileURLToPath(new URL('../../../src/domain/', import.meta.url))

const FORBIDDEN_MODULES = [
  /^fastify($|\/)/,
  /^fastify-plugin$/,
  /^@fastify\//,
  /^kysely($|\/)/,
  /^kysely-pglite-dialect$/,
  /^pg($|\/)/,
  /^pino($|\/)/,
  /^@electric-sql\//,
  /^nodemailer$/,
  /^@sinclair\/typebox/,
  /^node:/,
  /^(fs|path|os|crypto|child_process|http|https|net|worker_threads|url)$/,
]

const FORBIDDEN_CODE: readonly [RegExp, string][] = [
  [/\bprocess\s*[.[]/, 'process'],
  [/\bDate\s*\.\s*now\b/, 'Date.now'],
  [/\bnew\s+Date\s*\(\s*\)/, 'new Date()'],
  [/\bnew\s+Date\b(?!\s*\()/, 'new Date'],
  [/\bMath\s*\.\s*random\b/, 'Math.random'],
  [/\bperformance\s*\.\s*now\b/, 'performance.now'],
  [/\bcrypto\s*\.\s*(randomUUID|getRandomValues)\b/, 'crypto randomness'],
  [/\b(fetch|setTimeout|setInterval|setImmediate)\s*\(/, 'I/O or timers'],
]

const files = sourceFiles(DOMAIN)

describe('src/domain purity', () => {
  it('finds the domain sources', () => {
    expect(files.length).toBeGreaterThan(10)
  })

  it.each(files.map((file) => [relative(DOMAIN, file), file]))('%s imports nothing impure', (_, file) => {
    const source = stripComments(readFileSync(file, 'utf8'))
    const offending = importSpecifiers(source).filter((specifier) => FORBIDDEN_MODULES.some((pattern) => pattern.test(specifier)))
    expect(offending).toEqual([])
    const outsideDomain = importSpecifiers(source).filter(
      (specifier) => specifier.startsWith('.') && !join(file, '..', specifier).startsWith(DOMAIN),
    )
    expect(outsideDomain).toEqual([])
  })

  it.each(files.map((file) => [relative(DOMAIN, file), file]))('%s reads no environment, clock or randomness', (_, file) => {
    const source = stripComments(readFileSync(file, 'utf8'))
    const found = FORBIDDEN_CODE.filter(([pattern]) => pattern.test(source)).map(([, name]) => name)
    expect(found).toEqual([])
  })

  it('keeps decimal.js behind money.ts', () => {
    const importers = files.filter((file) =>
      importSpecifiers(stripComments(readFileSync(file, 'utf8'))).some((s) => s.startsWith('decimal.js')),
    )
    expect(importers.map((file) => relative(DOMAIN, file))).toEqual(['money.ts'])
  })

  it('catches the patterns it looks for', () => {
    const sample =
      "import Fastify from 'fastify'\nimport { readFileSync } from 'node:fs'\nconst t = Date.now(); const d = new Date(); const e = process.env.X\n"
    expect(importSpecifiers(sample)).toEqual(['fastify', 'node:fs'])
    expect(FORBIDDEN_CODE.filter(([pattern]) => pattern.test(sample)).map(([, name]) => name)).toEqual([
      'process',
      'Date.now',
      'new Date()',
    ])
    expect(stripComments('// process.env\nconst url = "https://x"')).not.toMatch(/process/)
  })
})
