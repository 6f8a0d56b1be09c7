// Jest setup (setupFilesAfterEnv): every CloudFormation template a test under test/constructs synthesizes in this
// process is recorded for the run's cfn-lint (test/global-teardown.ts), named after the test that synthesized it.
// Other test files load nothing here.

import { sep } from 'node:path';
import { recordTemplate } from './cfn-lint';

const testPath = expect.getState().testPath ?? '';

if (testPath.includes(`${sep}test${sep}constructs${sep}`)) {
  const { Stage } = require('aws-cdk-lib') as typeof import('aws-cdk-lib');
  const synth = Stage.prototype.synth;
  // Template.fromStack, app.synth() and the nag harness all synthesize through Stage.synth.
  Stage.prototype.synth = function recordTemplates(this: InstanceType<typeof Stage>, options) {
    const assembly = synth.call(this, options);
    const test = `${testPath.slice(testPath.lastIndexOf(`${sep}test${sep}`) + 1)} › ${expect.getState().currentTestName ?? '(setup)'}`;
    for (const stack of assembly.stacks) recordTemplate(`${test} » ${stack.stackName}`, stack.template);
    return assembly;
  };
}
