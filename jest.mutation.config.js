/**
 * Jest for mutation testing (`npm run test:mutation`): the unit suites of the modules whose silent regression is
 * costly, without the cfn-lint global setup. Stryker runs only the tests that cover each mutant.
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  transform: {
    // Stryker's mutants may not type-check; its TypeScript checker reports those, so ts-jest only transpiles here.
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  testMatch: [
    '**/test/archive/tar-reader.test.ts',
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
    '**/test/repository/mme-rules.test.ts',
    '**/test/repository/ensemble-rules.test.ts',
  ],
  setupFilesAfterEnv: [],
  globalSetup: undefined,
  globalTeardown: undefined,
  reporters: ['default'],
};
