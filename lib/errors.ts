// Errors the library raises for problems a user can fix or must know about. Each carries a stable `code`; the CLI
// alone maps codes to exit codes and wording (lib/cli/exit-codes.ts), so the library never knows it runs under a
// command line. Like node-tar's `TAR_BAD_ARCHIVE`, a code names the problem, not the place that found it.

/**
 * Every code the library raises. Add a code here with a one-line meaning; TypeScript then asks for its exit code in
 * lib/cli/exit-codes.ts.
 */
export const ERROR_CODES = {
  // ---- the caller's request ----
  /** A flag, argument or option value the operation cannot use. */
  USAGE: 'a flag, argument or option value the operation cannot use',
  /** A path the caller named does not exist. */
  NOT_FOUND: 'a path the caller named does not exist',
  /** A file or directory exists but cannot be read (permissions, a directory where a file belongs, a link loop). */
  UNREADABLE: 'a file or directory exists but cannot be read',
  /** An output cannot be written. */
  UNWRITABLE: 'an output cannot be written',
  /** The operation was cancelled through its AbortSignal. */
  ABORTED: 'the operation was cancelled',
  /** The input was read and found invalid (a repository with errors, a config that does not parse). */
  INVALID: 'the input was read and found invalid',

  // ---- tensors and the KServe v2 protocol ----
  /** A tensor value does not fit its data type. */
  BAD_VALUE: 'a tensor value does not fit its data type',
  /** A tensor's shape and its data disagree. */
  BAD_SHAPE: "a tensor's shape and its data disagree",
  /** A KServe v2 request or response body is malformed. */
  BAD_BODY: 'a KServe v2 body is malformed',
  /** The model or the server answered with an error. */
  MODEL_ERROR: 'the model or the server answered with an error',

  // ---- archives ----
  /** Not a valid tar.gz (bad gzip stream, bad header, bad checksum). */
  TAR_BAD_ARCHIVE: 'not a valid tar.gz archive',
  /** A tar header's size field is not a non-negative integer. */
  TAR_BAD_SIZE: "a tar header's size field is not a non-negative integer",
  /** The archive ends before its data does. */
  TAR_TRUNCATED: 'the archive ends early',
  /** An entry would leave the target directory, or is of a kind that is never extracted. */
  TAR_UNSAFE_ENTRY: 'an archive entry is unsafe to extract',

  // ---- AWS ----
  /** The AWS resource (endpoint, bucket, model, object) does not exist. */
  AWS_NOT_FOUND: 'the AWS resource does not exist',
  /** The credentials may not perform the action. */
  AWS_ACCESS_DENIED: 'the credentials may not perform the action',
  /** No region, refused credentials or signature: the local AWS configuration is wrong. */
  AWS_CONFIG: 'the local AWS configuration is wrong',
  /** AWS kept throttling after retries. */
  AWS_THROTTLED: 'AWS kept throttling after retries',
  /** The resource exists but is not ready (still creating, updating or loading). */
  AWS_NOT_READY: 'the resource is not ready',
  /** The service could not be reached. */
  AWS_UNREACHABLE: 'the service could not be reached',
  /**
   * A push was cancelled while uploading (its multipart upload aborted). Exit 1, as before codes existed; ABORTED
   * (130) would be the consistent choice.
   */
  UPLOAD_CANCELLED: 'an upload was cancelled',
  /** The object already exists and would be replaced. */
  ALREADY_EXISTS: 'the object already exists',
  /** The endpoint has no CloudWatch log group: it never wrote a line, the group was deleted, or the name or region is wrong. */
  LOG_GROUP_NOT_FOUND: "the endpoint's CloudWatch log group does not exist",
  /** The endpoint is not a multi-model endpoint this tool can use (no model, no S3 prefix, no variant). */
  ENDPOINT_UNUSABLE: 'the endpoint is not a usable multi-model endpoint',
  /** Any other AWS failure, with the service's own name and message. */
  AWS_FAILED: 'an AWS call failed',

  // ---- a local Triton container ----
  /** No container answered at the address. */
  CONTAINER_UNREACHABLE: 'no container answered',
  /** The container answered with a failure. */
  CONTAINER_FAILED: 'the container answered with a failure',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A problem the library reports to its caller: a stable `code` and a sentence saying what and how to fix it. */
export class MmeError extends Error {
  override readonly name = 'MmeError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Whether `err` is an MmeError (with `code`, when given). */
export function isMmeError(err: unknown, code?: ErrorCode): err is MmeError {
  return err instanceof MmeError && (code === undefined || err.code === code);
}
