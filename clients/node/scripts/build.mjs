// The package's builds: ES modules in dist/esm and CommonJS in dist/cjs, each with its .d.ts (so that `import` and
// `require` users both get types for the module format they load).
import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true })
for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' })
}
// Inside a "type": "module" package, dist/cjs says its .js files are CommonJS.
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n')
