// When the tests' clock starts (TestClock in test/helpers/app.ts). The template database every test file clones is
// maintained at this instant too (test/global-setup.ts), so its partitions are those of a service running then.
export const TEST_CLOCK_START = new Date('2026-11-21T10:00:00.000Z')
