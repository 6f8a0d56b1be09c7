// Jest global setup: the directory where test files record the CloudFormation templates they synthesize, linted once
// by test/cfn-lint-teardown.ts. Workers inherit the variable.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LINT_DIR_VARIABLE } from './constructs/cfn-lint';

export default function setup(): void {
  process.env[LINT_DIR_VARIABLE] = mkdtempSync(join(tmpdir(), 'mme-cfn-templates-'));
}
