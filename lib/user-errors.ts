// Problems a user can fix, each with the exit code the CLI gives it. The CLI prints their message without a stack
// trace. Being replaced: the library raises `MmeError` with a code (lib/errors.ts) and the CLI maps codes to exit codes
// (lib/cli/exit-codes.ts); once no library module raises these, they move into lib/cli/.

/** Exit codes shared by every command. */
export const ExitCode = {
  Ok: 0,
  /** The input was understood and found invalid, or the remote operation failed. */
  Failure: 1,
  /** Usage or I/O error: a missing path, a bad flag, an unreadable file. */
  Usage: 2,
} as const;

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
