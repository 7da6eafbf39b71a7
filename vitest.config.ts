import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // The Node client (clients/node) is used from its source here, as tsconfig.json's paths do for the type checker.
  resolve: { alias: { '@canopy-climate/node': fileURLToPath(new URL('./clients/node/src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts', 'clients/node/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
})
