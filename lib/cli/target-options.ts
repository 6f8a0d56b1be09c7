// Options several commands share, defined once: the endpoint a repository is meant for (`validate`, `package` and
// `local load` take the same `--instance-type` and `--triton-version`) and how warnings count (`--accept`, `--strict`).
// Grammar only: what the values mean is checked when the command runs (lib/catalog/endpoint-target.ts, verdict.ts).

import type { Command } from 'commander';
import { described } from './help-style';
import { repeatable } from './invoke-flags';

export interface TargetFlags {
  readonly instanceType?: string;
  readonly tritonVersion?: string;
}

export interface VerdictFlags {
  /** Warning codes acknowledged (`--accept`, repeatable, or comma-separated). */
  readonly accept?: readonly string[];
  readonly strict?: boolean;
}

/**
 * `--instance-type` and `--triton-version`. `use` says what the command does with the target; `tritonDefault` is the
 * release taken when none is given.
 */
export function addTargetOptions(command: Command, use: { instanceType: string; tritonVersion: string; tritonDefault: string }) {
  return command
    .option(
      '--instance-type <type>',
      described(`the endpoint's SageMaker instance type ${use.instanceType}`, { default: 'ml.g4dn.xlarge' }),
    )
    .option('--triton-version <YY.MM>', described(`the Triton release deployed ${use.tritonVersion}`, { default: use.tritonDefault }));
}

/** `--accept CODE` (repeatable) and `--strict`, for the commands that report a validation. */
export function addVerdictOptions(command: Command) {
  return command
    .option(
      '--accept <code>',
      'acknowledge warnings with this code (e.g. tensorrt-plan-target): they are listed as accepted, not counted; ' +
        'repeatable or comma-separated; an error code or an unknown code is refused',
      repeatable,
    )
    .option('--strict', 'treat warnings not accepted as failures (exit 1)');
}
