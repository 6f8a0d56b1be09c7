// Jest global teardown: one cfn-lint run over every template the run's tests recorded; an error fails the run, naming
// the test and stack each failing template came from. A missing cfn-lint fails the run too (with how to install it).

import { rmSync } from 'node:fs';
import { formatCfnLintErrors, LINT_DIR_VARIABLE, lintRecordedTemplates } from './constructs/cfn-lint';

export default function teardown(): void {
  const dir = process.env[LINT_DIR_VARIABLE];
  if (!dir) return;
  try {
    const errors = lintRecordedTemplates(dir);
    if (errors.length > 0) {
      throw new Error(`cfn-lint found errors in templates the tests synthesized:\n${formatCfnLintErrors(errors)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
