// The error-code table is the contract clients branch on: every code is documented in the README with its
// status, and every code is raised somewhere (a code nothing raises is a promise nobody keeps).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/http/errors.js'
import { repoRoot } from '../helpers/process.js'

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })

describe('error codes', () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')

  it.each(Object.entries(ERROR_CODES))('%s is in the README table with its status', (code, { status }) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${code}\` \\| ${status} \\|`, 'm'))
  })

  it('lists no code in the README that the table does not have', () => {
    const documented = [...readme.matchAll(/^\| `([A-Z_]+)` \| \d{3} \|/gm)].map((m) => m[1])
    expect(documented.sort()).toEqual(Object.keys(ERROR_CODES).sort())
  })

  it('has no code that nothing in src raises or maps', () => {
    // Type unions name every code; only uses count (a throw, a mapping, an errorResponses list).
    const withoutUnions = (text: string) => text.replace(/^\s*\| '[A-Z_]+'$/gm, '')
    const sources = sourceFiles(join(repoRoot, 'src'))
      .map((path) => withoutUnions(readFileSync(path, 'utf8')))
      .join('\n')
    const unused = Object.keys(ERROR_CODES).filter((code) => !sources.includes(`'${code}'`))
    expect(unused).toEqual([])
  })
})
