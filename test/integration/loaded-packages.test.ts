import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/process.js'

// What a process holds from its start is memory it holds for its whole life (docs/benchmarks.md, "What a process
// holds from its start"): the packages only some deployments or some requests need are loaded with their first use.
const LOADED_ON_FIRST_USE = ['ioredis', 'undici', 'nodemailer', '@node-rs/argon2', '@zxcvbn-ts/language-common']

interface Report {
  health: number
  afterStart: string[]
  afterPassword: string[]
}

function report(): Promise<Report> {
  const loader = join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', loader, join(repoRoot, 'test/fixtures/loaded-packages.ts')],
      { cwd: repoRoot, env: { PATH: process.env.PATH }, timeout: 60_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as Report)),
    )
  })
}

describe('packages loaded on first use', () => {
  it('a started app without Redis, SMTP, a webhook delivery or a sign-in holds none of them; a password check loads its list', async () => {
    const { health, afterStart, afterPassword } = await report()
    expect(health).toBe(200)
    // The report sees CommonJS packages loaded from ES modules: the app's own are there.
    expect(afterStart).toEqual(expect.arrayContaining(['fastify', 'pg']))
    expect(afterStart.filter((name) => LOADED_ON_FIRST_USE.includes(name))).toEqual([])
    expect(afterPassword).toContain('@zxcvbn-ts/language-common')
  })
})
