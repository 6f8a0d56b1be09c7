// The CLI's one table from library error codes to exit codes: 1 invalid or failed, 2 usage or I/O, 130 cancelled.
import { exitCodeOf } from '../../lib/cli/exit-codes';
import { ERROR_CODES, ErrorCode } from '../../lib/errors';

describe('exit codes of library errors', () => {
  const expected: Record<ErrorCode, number> = {
    USAGE: 2,
    NOT_FOUND: 2,
    UNREADABLE: 2,
    UNWRITABLE: 2,
    ABORTED: 130,
    INVALID: 1,
    BAD_VALUE: 1,
    BAD_SHAPE: 2,
    BAD_BODY: 1,
    MODEL_ERROR: 1,
    TAR_BAD_ARCHIVE: 1,
    TAR_BAD_SIZE: 1,
    TAR_TRUNCATED: 1,
    TAR_UNSAFE_ENTRY: 1,
    AWS_NOT_FOUND: 1,
    AWS_ACCESS_DENIED: 1,
    AWS_CONFIG: 2,
    AWS_THROTTLED: 1,
    AWS_NOT_READY: 1,
    AWS_UNREACHABLE: 2,
    UPLOAD_CANCELLED: 1,
    ALREADY_EXISTS: 1,
    ENDPOINT_UNUSABLE: 1,
    AWS_FAILED: 1,
    CONTAINER_UNREACHABLE: 1,
    CONTAINER_FAILED: 1,
    LOG_GROUP_NOT_FOUND: 1,
  };

  it.each(Object.keys(ERROR_CODES) as ErrorCode[])('%s has its exit code', (code) => {
    expect(exitCodeOf(code)).toBe(expected[code]);
  });
});
