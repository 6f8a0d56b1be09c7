/** Jest runs the TypeScript sources directly, esbuild stripping the types (test/esbuild-transform.js: with source maps,
 * so failures point at the line in the .ts file); `npm run typecheck` does the type checking. */
const { availableParallelism, cpus, loadavg } = require('node:os');

// Timeouts scale with the machine's load, so a busy machine slows the suite down instead of failing it: the factor
// is the 1-minute load per core (at least 1, at most 5), or MME_TEST_TIMEOUT_SCALE. test/setup-timeouts.ts applies it
// to every explicit per-test and per-hook timeout; this file to the default one.
const scale =
  Number(process.env.MME_TEST_TIMEOUT_SCALE) || Math.min(5, Math.max(1, loadavg()[0] / Math.max(1, cpus().length)));
process.env.MME_TEST_TIMEOUT_SCALE = String(Math.round(scale * 100) / 100);

module.exports = {
  // jest's node environment; its worker exits without freeing its heap page by page (test/jest-environment.js).
  testEnvironment: '<rootDir>/test/jest-environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/esbuild-transform.js' },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  setupFilesAfterEnv: [
    '<rootDir>/test/setup-timeouts.ts',
    // Every CloudFormation template the construct tests synthesize is recorded, then linted by one cfn-lint run.
    '<rootDir>/test/constructs/lint-synthesized-templates.ts',
  ],
  // Once per run, before any test file: builds dist/ if stale, finds the machine tools (test/tools.ts).
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: Math.round(60000 * Number(process.env.MME_TEST_TIMEOUT_SCALE)),
  // One worker more than the cores: many tests wait (timeouts run out, a load test keeps its real-time schedule,
  // servers answer on loopback), and a third worker fills those waits on two cores. On a quiet 2-core machine the
  // suite kept 1.86 to 1.90 cores busy over eight runs with three workers, 1.63 to 1.76 over nine with two.
  maxWorkers: availableParallelism() + 1,
  // No watchman on the machines this runs on: without this, every Jest process first starts `watchman` to find out.
  watchman: false,
  // Long files first, also on a clean clone where Jest has no timings (test/sequencer.js).
  testSequencer: '<rootDir>/test/sequencer.js',
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
};
