#!/usr/bin/env node
// The `cdk deploy` app (cdk.json runs it with tsx): one TritonMmeStack configured from context, checked with cdk-nag.
// Context keys: constructs/app-context.ts (APP_CONTEXT_KEYS) and docs/cdk.md.

import { Annotations, App, Validations } from 'aws-cdk-lib';
import { readAppContext } from '../constructs/app-context';
import { TritonMmeStack } from '../constructs/triton-mme-stack';
import { reserveValidatorMemory } from '../constructs/validator-memory';

async function main(): Promise<void> {
  // Without a stack trace per annotation, `cdk synth` prints each warning alone instead of after a bare file:line of
  // the construct that raised it; `cdk synth --debug` (CDK_DEBUG) keeps them.
  const app = new App({ stackTraces: process.env.CDK_DEBUG === 'true' });
  const settings = readAppContext(app.node);
  const stack = new TritonMmeStack(app, settings.stackName, {
    ...settings.stackProps,
    // No region: an environment-agnostic template that synthesizes anywhere without credentials.
    env: settings.region ? { region: settings.region, account: process.env.CDK_DEFAULT_ACCOUNT } : undefined,
  });
  for (const warning of settings.warnings) Annotations.of(stack).addWarningV2('mme-deploy:unknown-context', warning);
  if (settings.nag) {
    // Loaded only when used: cdk-nag takes about 0.8 s to load (bench/cdk-synth.js).
    const { AwsSolutionsChecks } = await import('cdk-nag');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  }
  // aws-cdk-lib's template validation (on unless CDK_VALIDATION=false) starts a WebAssembly engine whose memory grows
  // in ~1,000 steps, a full GC each: given its memory at once first, it starts in ~2 s of CPU instead of ~13 s; and its
  // functions are kept from V8's optimizing tier, whose background compiles cost a synth ~3 s more CPU than they saved.
  reserveValidatorMemory();
  app.synth();
}

main().catch((err: unknown) => {
  // Bad context or props are user input: say what is wrong, not where in our code it was noticed.
  const error = err instanceof Error ? err : new Error(String(err));
  process.stderr.write(`${process.env.MME_DEPLOY_DEBUG ? error.stack : error.message}\n`);
  process.exitCode = 1;
});
