/**
 * Jest for mutation testing (`npm run test:mutation`): the unit suites of the modules whose silent regression is
 * costly, without the cfn-lint global setup. Stryker runs only the tests that cover each mutant.
 */
const { dirname, join } = require('node:path');
const base = require('./jest.config.js');

// scripts/mutation.js names the test files that import the module under test (MME_MUTATION_TESTS, a JSON array of
// paths from the project root): Jest then looks only at their folders and runs only them. Jest's own
// --findRelatedTests would pick the same files, but searches all of test/ (1,700 files) again for every mutant (the
// gain was not measured on its own: the machine was too loaded to tell).
const only = process.env.MME_MUTATION_TESTS ? JSON.parse(process.env.MME_MUTATION_TESTS) : undefined;

module.exports = {
  ...base,
  transform: {
    // Stryker's mutants may not type-check; its TypeScript checker reports those, so ts-jest only transpiles here.
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  ...(only && { roots: [...new Set(only.map((file) => join('<rootDir>', dirname(file))))] }),
  testMatch: only ? only.map((file) => `**/${file}`) : [
    '**/test/archive/tar-reader.test.ts',
    '**/test/archive/tar-reader-details.test.ts',
    '**/test/archive/tar-gz.test.ts',
    '**/test/archive/archive-links.test.ts',
    '**/test/archive/write-file.test.ts',
    '**/test/push/*.test.ts',
    '**/test/cli/signals-in-process.test.ts',
    '**/test/constructs/scaling-guard.test.ts',
    '**/test/constructs/archive-retention-handler.test.ts',
    '**/test/constructs/archive-copy-handler.test.ts',
    '**/test/kserve/kserve-codec.test.ts',
    '**/test/kserve/invoke-request.test.ts',
    '**/test/aws/endpoint-resolution.test.ts',
    // Not test/repository/mme-rules.test.ts: it validates whole repositories (83 s on a loaded machine, for every
    // mutant); mme-rules-unit.test.ts calls the rules themselves, in a few seconds, and asserts at least as much.
    '**/test/repository/mme-rules-unit.test.ts',
    '**/test/repository/ensemble-rules.test.ts',
  ],
  // Jest's own node environment: Stryker's runner wraps the environment and cannot resolve jest.config.js's
  // `<rootDir>/test/jest-environment.js` (whose quick worker exit only shortens the end of a whole-suite run).
  testEnvironment: 'node',
  setupFilesAfterEnv: [],
  globalSetup: undefined,
  globalTeardown: undefined,
  reporters: ['default'],
};
