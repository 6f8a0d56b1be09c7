import { explainAwsError } from '../../lib/aws/aws-errors';
import { exitCodeOf } from '../../lib/cli/exit-codes';
import { MmeError } from '../../lib/errors';

const context = { permission: 's3:PutObject', resource: 's3://b/p/m.tar.gz' };
const error = (name: string, message = name, status?: number) =>
  Object.assign(new Error(message), { name, ...(status ? { $metadata: { httpStatusCode: status } } : {}) });

describe('AWS errors as sentences', () => {
  it.each([
    [
      error('AccessDenied', 'Access Denied', 403),
      'AWS_ACCESS_DENIED',
      1,
      'Access denied: the credentials in use may not s3:PutObject on s3://b/p/m.tar.gz.',
    ],
    [error('NoSuchBucket', 'The specified bucket does not exist', 404), 'AWS_NOT_FOUND', 1, 'Bucket of s3://b/p/m.tar.gz does not exist'],
    [error('CredentialsProviderError', 'Could not load credentials from any providers'), 'AWS_CONFIG', 2, 'No AWS credentials found.'],
    [error('Error', 'Region is missing'), 'AWS_CONFIG', 2, 'No AWS region is set: pass --region'],
    [error('ExpiredToken', 'The provided token has expired.', 400), 'AWS_CONFIG', 2, 'they are expired or invalid'],
    [
      error('ThrottlingException', 'Rate exceeded', 400),
      'AWS_THROTTLED',
      1,
      'AWS is throttling s3:PutObject (ThrottlingException) and kept refusing after retries',
    ],
    [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
      'AWS_UNREACHABLE',
      2,
      'Could not connect to the service for s3://b/p/m.tar.gz (ECONNREFUSED)',
    ],
    [
      error('InternalError', 'We encountered an internal error.', 500),
      'AWS_FAILED',
      1,
      's3:PutObject on s3://b/p/m.tar.gz failed: InternalError: We encountered an internal error.',
    ],
  ] as const)('explains %p', (err, code, exitCode, message) => {
    const explained = explainAwsError(err, context);
    expect(explained).toBeInstanceOf(MmeError);
    expect(explained).toMatchObject({ code });
    expect(exitCodeOf(code)).toBe(exitCode);
    expect(explained.message).toContain(message);
  });

  it('passes errors that already carry a code through unchanged', () => {
    const original = new MmeError('AWS_NOT_FOUND', 'already a sentence');
    expect(explainAwsError(original, context)).toBe(original);
  });
});
