// Jest global teardown: cfn-lint over every template the run's tests recorded; an error fails the run, naming
// the test and stack each failing template came from. cfn-lint follows the gated tests' rule (test/tools.ts): when
// it is not installed, outside CI the lint is skipped with a note saying how to install it; under CI=true it fails.

import { rmSync } from 'node:fs';
import { formatCfnLintErrors, LINT_DIR_VARIABLE, lintRecordedTemplates, takeEarlyStart } from './constructs/cfn-lint';
import { findTools, missingMessage, underCi } from './tools';

export default async function teardown(): Promise<void> {
  const dir = process.env[LINT_DIR_VARIABLE];
  const run = process.env.MME_TEST_RUN_DIR;
  // The cfn-lint the global setup started when the first template was recorded (its start-up overlapped the tests).
  const started = takeEarlyStart();
  try {
    if (!dir) return;
    const found = findTools({ tools: ['cfn-lint'] });
    if (!found.ok) {
      const message = `cfn-lint of the synthesized templates ${missingMessage(found)}`;
      if (underCi()) throw new Error(`${message}: CI installs it (.ci/run)`);
      process.stderr.write(`\nskipped: ${message}\n`);
      return;
    }
    const errors = await lintRecordedTemplates(dir, found.paths['cfn-lint']!, undefined, started);
    if (errors.length > 0) {
      throw new Error(`cfn-lint found errors in templates the tests synthesized:\n${formatCfnLintErrors(errors)}`);
    }
  } finally {
    started?.stop(); // when the lint did not run (it ends itself once it has)
    if (run) rmSync(run, { recursive: true, force: true });
    else if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
