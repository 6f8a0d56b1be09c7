// A real S3-protocol server for tests: s3rver on 127.0.0.1 (port 0, temp dir), plus the two multipart calls s3rver
// lacks (ListMultipartUploads, AbortMultipartUpload), answered from s3rver's own upload directory so tests can check
// that no multipart upload is left behind.

import type * as Crypto from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';

// Loaded once per jest worker, outside the test file's sandbox (test/jest-environment.js): it is the tests' server,
// not code under test, and loading its ~300 modules again in every file that starts one cost about 0.5 s of CPU each.
// Outside jest (a script, a process a test starts) it is an ordinary require.
const workerRequire = (globalThis as { [key: symbol]: NodeJS.Require | undefined })[Symbol.for('mme-deploy.workerRequire')] ?? require;
const S3rver = workerRequire('s3rver') as new (options: Record<string, unknown>) => {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  configureBuckets(): Promise<void>;
};

// s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 (Node >= 17) no longer offers, so
// listing past 1,000 keys fails with a 500. Map its DES to AES-128-CBC with the 8-byte key and IV doubled: the
// tokens stay opaque and round-trip, and nothing else in the test process asks for DES.
function allowS3rverContinuationTokens(): void {
  // The module object itself (an `import *` namespace would be a copy that s3rver never sees).
  const crypto = require('node:crypto') as typeof Crypto;
  const patched = crypto as typeof Crypto & { s3rverDesPatched?: boolean };
  if (patched.s3rverDesPatched) return;
  const widen = (b: Crypto.BinaryLike | Crypto.CipherKey | null) => Buffer.concat([Buffer.from(b as Buffer), Buffer.from(b as Buffer)]);
  const { createCipheriv, createDecipheriv } = crypto;
  const mutable = crypto as unknown as Record<string, unknown>;
  mutable.createCipheriv = (algorithm: string, key: Crypto.CipherKey, iv: Crypto.BinaryLike | null, options?: unknown) =>
    algorithm === 'des' ? createCipheriv('aes-128-cbc', widen(key), widen(iv)) : createCipheriv(algorithm, key, iv, options as never);
  mutable.createDecipheriv = (algorithm: string, key: Crypto.CipherKey, iv: Crypto.BinaryLike | null, options?: unknown) =>
    algorithm === 'des' ? createDecipheriv('aes-128-cbc', widen(key), widen(iv)) : createDecipheriv(algorithm, key, iv, options as never);
  patched.s3rverDesPatched = true;
}

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface LocalS3 {
  readonly endpoint: string;
  readonly directory: string;
  readonly client: S3Client;
  /** Names of the commands `client` has sent, in order (e.g. `CreateMultipartUploadCommand`). */
  readonly commands: string[];
  /** Multipart uploads still open in a bucket, as ListMultipartUploads reports them: [key, uploadId]. */
  listMultipartUploads(bucket: string): Promise<[string, string][]>;
  close(): Promise<void>;
}

export async function startLocalS3(buckets: string[]): Promise<LocalS3> {
  allowS3rverContinuationTokens();
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const s3rver = new S3rver({ directory, silent: true, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
  await s3rver.configureBuckets();
  const handle = s3rver.callback();
  const uploadsDir = (bucket: string) => join(directory, bucket, '._S3rver_uploads');
  const pendingUploads = (bucket: string): [string, string][] => {
    const dir = uploadsDir(bucket);
    if (!existsSync(dir)) return [];
    return readdirSync(dir).map((id) => [readFileSync(join(dir, id, 'key'), 'utf8'), id]);
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [bucket, ...keyParts] = url.pathname.split('/').filter(Boolean);
    if (req.method === 'GET' && bucket && keyParts.length === 0 && url.searchParams.has('uploads')) {
      const uploads = pendingUploads(bucket)
        .map(([key, id]) => `<Upload><Key>${key}</Key><UploadId>${id}</UploadId></Upload>`)
        .join('');
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult>' +
          `<Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>${uploads}</ListMultipartUploadsResult>`,
      );
      return;
    }
    if (req.method === 'DELETE' && bucket && url.searchParams.has('uploadId')) {
      const dir = join(uploadsDir(bucket), url.searchParams.get('uploadId')!);
      req.resume();
      if (!existsSync(dir)) {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end(
          '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>The ' +
            'specified upload does not exist.</Message></Error>',
        );
        return;
      }
      rmSync(dir, { recursive: true, force: true });
      res.writeHead(204);
      res.end();
      return;
    }
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    // Without this the SDK streams PutObject with aws-chunked checksum trailers, which s3rver stores verbatim.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const commands: string[] = [];
  client.middlewareStack.add(
    (next, context) => (args) => {
      commands.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return {
    endpoint,
    directory,
    client,
    commands,
    listMultipartUploads: async (bucket) => {
      const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      return (listed.Uploads ?? []).map((u) => [u.Key ?? '', u.UploadId ?? '']);
    },
    close: async () => {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Starts s3rver with `buckets` before the suite (with its credentials in the environment, where the SDK's default
 * chain finds them) and closes it after; the returned getter gives the running server.
 */
export function useLocalS3(buckets: string[]): () => LocalS3 {
  let s3: LocalS3 | undefined;
  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    s3 = await startLocalS3(buckets);
  });
  afterAll(() => s3?.close());
  return () => s3!;
}
