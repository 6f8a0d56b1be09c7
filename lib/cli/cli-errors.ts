// Errors the CLI raises about its own flags and outputs, each with its exit code and a code for `--json`. The library
// raises MmeError with a code instead (lib/errors.ts, mapped in exit-codes.ts); program.ts prints both without a
// stack trace.

import { closeSync, openSync, readSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { isMmeError, MmeError } from '../errors';
import { ExitCode } from './exit-codes';

/** A problem the user can fix, reported as one message without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.Failure,
    /** The `code` of the `--json` error object. */
    readonly code: string = exitCode === ExitCode.Usage ? 'USAGE' : 'FAILED',
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A usage or I/O problem: exit code 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.Usage, 'USAGE');
    this.name = 'UsageError';
  }
}

/**
 * A library error whose message names `absolute` (the CLI resolves paths against its working directory before calling
 * the library), with the path as the user typed it, so messages quote what the user knows. Other errors as they are.
 */
export function withPathAsGiven(err: unknown, absolute: string, given: string): unknown {
  if (!isMmeError(err) || !err.message.includes(absolute)) return err;
  const shown = given.replace(/[\\/]+$/, '') || given;
  const message = err.message.split(`${absolute}${sep}`).join(`${shown}/`).split(absolute).join(shown);
  return new MmeError(err.code, message, { cause: err });
}

/** The signatures a zip file starts with: a local file header, an empty archive's end record, a spanned archive. */
const ZIP_SIGNATURES = ['504b0304', '504b0506', '504b0708'];

/**
 * Refuses a zip where an archive is expected (`plan`, `push`, `local load`), before anything else is checked: one
 * message and exit 2 in every command. Anything else (a directory, a missing file) is left to the command.
 */
export function refuseZip(given: string, cwd: string): void {
  let head = '';
  try {
    const fd = openSync(resolve(cwd, given), 'r');
    try {
      const bytes = Buffer.alloc(4);
      head = bytes.subarray(0, readSync(fd, bytes, 0, 4, 0)).toString('hex');
    } finally {
      closeSync(fd);
    }
  } catch {
    return;
  }
  if (ZIP_SIGNATURES.includes(head)) {
    throw new UsageError(
      `${given} is a zip file, and SageMaker loads only a gzip-compressed tar archive: make the archive with ` +
        '`mme-deploy package <repository>`.',
    );
  }
}
