// Errors the CLI raises about its own flags and outputs, each with its exit code. The library raises MmeError with a
// code instead (lib/errors.ts, mapped in exit-codes.ts); program.ts prints both without a stack trace.

import { ExitCode } from './exit-codes';

/** A problem the user can fix, reported as one message without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.Failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A usage or I/O problem: exit code 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.Usage);
    this.name = 'UsageError';
  }
}
