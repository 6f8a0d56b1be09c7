/** Jest runs the TypeScript sources directly; `npm run typecheck` does the type checking. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  // Every CloudFormation template the construct tests synthesize is recorded, then linted by one cfn-lint run.
  setupFilesAfterEnv: ['<rootDir>/test/constructs/lint-synthesized-templates.ts'],
  globalSetup: '<rootDir>/test/cfn-lint-setup.ts',
  globalTeardown: '<rootDir>/test/cfn-lint-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
};
