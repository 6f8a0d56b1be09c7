// The CLI's one decision about library errors: which exit code each code gets. 0 ok, 1 invalid or failed,
// 2 usage or I/O (README "Exit codes"); 130 for a cancelled operation, as shells report SIGINT.

import type { ErrorCode } from '../errors';

export const ExitCode = {
  Ok: 0,
  /** The input was understood and found invalid, or the remote operation failed. */
  Failure: 1,
  /** Usage or I/O error: a missing path, a bad flag, an unreadable file. */
  Usage: 2,
  /** Cancelled by the user (Ctrl-C, SIGTERM). */
  Interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

const EXIT_CODE_OF: Record<ErrorCode, ExitCodeValue> = {
  USAGE: ExitCode.Usage,
  NOT_FOUND: ExitCode.Usage,
  UNREADABLE: ExitCode.Usage,
  UNWRITABLE: ExitCode.Usage,
  ABORTED: ExitCode.Interrupted,
  INVALID: ExitCode.Failure,
  BAD_VALUE: ExitCode.Failure,
  BAD_SHAPE: ExitCode.Usage,
  BAD_BODY: ExitCode.Failure,
  MODEL_ERROR: ExitCode.Failure,
  TAR_BAD_ARCHIVE: ExitCode.Failure,
  TAR_BAD_SIZE: ExitCode.Failure,
  TAR_TRUNCATED: ExitCode.Failure,
  TAR_UNSAFE_ENTRY: ExitCode.Failure,
  AWS_NOT_FOUND: ExitCode.Failure,
  AWS_ACCESS_DENIED: ExitCode.Failure,
  AWS_CONFIG: ExitCode.Usage,
  AWS_THROTTLED: ExitCode.Failure,
  AWS_NOT_READY: ExitCode.Failure,
  AWS_UNREACHABLE: ExitCode.Usage,
  UPLOAD_CANCELLED: ExitCode.Failure,
  ALREADY_EXISTS: ExitCode.Failure,
  ENDPOINT_UNUSABLE: ExitCode.Failure,
  LOG_GROUP_NOT_FOUND: ExitCode.Failure,
  AWS_FAILED: ExitCode.Failure,
  CONTAINER_UNREACHABLE: ExitCode.Failure,
  CONTAINER_FAILED: ExitCode.Failure,
};

/** The exit code for a library error's code. */
export function exitCodeOf(code: ErrorCode): ExitCodeValue {
  return EXIT_CODE_OF[code];
}
