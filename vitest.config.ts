import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

// Integration and browser tests start servers, clusters and browsers and measure time bounds: they run one file at a
// time, after the rest, as the whole suite once did. The rest (pure, HTTP through app.inject, SDK, client) is CPU- or
// database-bound without bounds of wall time, and runs two files at a time.
const SEQUENTIAL = ['test/integration/**/*.test.ts', 'test/browser/**/*.test.ts']

export default defineConfig({
  // The Node client (clients/node) is used from its source here, as tsconfig.json's paths do for the type checker.
  resolve: { alias: { '@canopy-climate/node': fileURLToPath(new URL('./clients/node/src/index.ts', import.meta.url)) } },
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Guards against a hang, not bounds on speed (those are in npm run bench): a CI machine may run the suite at half
    // this one's speed, where the 10,000-run properties and the server tests took up to 30 s.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts', 'clients/node/test/**/*.test.ts'],
          exclude: SEQUENTIAL,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'sequential', include: SEQUENTIAL, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
})
