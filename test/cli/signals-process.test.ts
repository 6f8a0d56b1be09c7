// Slow: ~10 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// Every long command under SIGTERM, SIGHUP and Ctrl-C (SIGINT), in a real process: it stops, cleans up what it was
// writing or uploading, and exits 130; where the clean-up cannot be done, it prints the exact command that does it.
// Each test sends the signal only once the command is provably under way (its temp file exists, its upload started,
// the server got its request, its archive is open), so no signal lands before the CLI listens for it.

import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { encodeHeaders, endOfArchive } from '../../lib/archive/tar-header';
import { runCli } from './run-cli';
import { CliProcess, sparseRepository, spawnCli, standIn, stderrShows, until, untilIn } from './cli-process';
import { LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../aws/s3rver-harness';

const GiB = 1024 ** 3;
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-signals-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const repository = (name: string, size: number): string => sparseRepository(dir, name, size);

const tempFiles = (name: string, under = dir) => readdirSync(under).filter((f) => f.startsWith(`.${name}.`) && f.endsWith('.tmp'));

/** `promise`, with its rejection left to whoever awaits it later (a test), not reported as unhandled meanwhile. */
function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

describe('package under signals', () => {
  const SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const;

  /** Packs a 16 GiB repository in a directory of its own and sends `signal` once the temp file exists. */
  async function interrupted(signal: (typeof SIGNALS)[number]) {
    const own = mkdtempSync(join(tmpdir(), `mme-signals-${signal}-`));
    const run = spawnCli(['package', sparseRepository(own, 'big', 16 * GiB), '-o', join(own, 'big.tar.gz')], { cwd: own });
    try {
      await untilIn(own, () => tempFiles('big.tar.gz', own).length > 0, 'the temp file', 20, run);
      run.kill(signal);
      return { code: await run.exit, err: run.err(), left: readdirSync(own).sort() };
    } finally {
      run.kill('SIGKILL');
      rmSync(own, { recursive: true, force: true });
    }
  }
  // The three processes run at once (each waits on its start-up and the test's poll far more than it computes); each
  // test reads its own.
  let runs: Record<(typeof SIGNALS)[number], ReturnType<typeof interrupted>> | undefined;
  const started = () =>
    (runs ??= { SIGTERM: awaitedLater(interrupted('SIGTERM')), SIGHUP: awaitedLater(interrupted('SIGHUP')),
      SIGINT: awaitedLater(interrupted('SIGINT')) });

  for (const signal of SIGNALS) {
    it(`stops on ${signal}, leaves no .NAME.tar.gz.*.tmp and no archive, and exits 130`, async () => {
      const run = await started()[signal];
      expect(run.code).toBe(130);
      expect(run.err).toBe('mme-deploy: interrupted: no archive was written.\n');
      expect(run.left).toEqual(['big']);
    });
  }

  it('removes, on the next run, the temp file of a run killed outright (SIGKILL), and never one a live process owns', async () => {
    const killed = spawnCli(['package', repository('big', 16 * GiB), '-o', join(dir, 'out.tar.gz')], { cwd: dir });
    await untilIn(dir, () => tempFiles('out.tar.gz').length > 0, 'the temp file', 20, killed);
    killed.kill('SIGKILL');
    await killed.exit;
    const [stale] = tempFiles('out.tar.gz');
    expect(stale).toMatch(/^\.out\.tar\.gz\.[A-Za-z0-9-]+\.\d+\.[0-9a-f]{8}\.tmp$/);
    // A writer that is alive (this test process) and one on another machine sharing the directory: both kept.
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63);
    const live = `.out.tar.gz.${host}.${process.pid}.0123abcd.tmp`;
    const elsewhere = `.out.tar.gz.other-host.${killed.pid}.4567cdef.tmp`;
    writeFileSync(join(dir, live), 'being written');
    writeFileSync(join(dir, elsewhere), 'being written elsewhere');

    const next = await runCli(['package', repository('small', 1024), '-o', join(dir, 'out.tar.gz')], { cwd: dir });
    expect(next.code).toBe(0);
    expect(next.stdout).toContain(`Removed 1 temp file(s) left by an interrupted run: ${stale}`);
    expect(tempFiles('out.tar.gz').sort()).toEqual([live, elsewhere].sort());
  });
});

describe('push under signals', () => {
  /** The CLI uploads in parts of S3's minimum, 5 MiB (test/cli/small-parts.cjs): a third of the bytes before a signal. */
  const SMALL_PARTS = ['--require', join(__dirname, 'small-parts.cjs')];
  const S3_SIGNALS = ['SIGTERM', 'SIGHUP'] as const;
  /** A bucket per signal: the two pushes run at once. */
  const bucketOf = (signal: (typeof S3_SIGNALS)[number]) => `models-${signal.toLowerCase()}`;
  let s3: LocalS3;
  beforeAll(async () => {
    s3 = await startLocalS3(S3_SIGNALS.map(bucketOf));
  });
  afterAll(async () => {
    await Promise.allSettled(Object.values(s3Runs ?? {}));
    await s3.close();
  });

  /** A file that passes push's gzip check (with --no-verify), with `size` bytes to upload (a sparse file: no disk). */
  function gzipLooking(name: string, size: number, under = dir): string {
    const path = join(under, name);
    writeFileSync(path, Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    truncateSync(path, size);
    return path;
  }

  /** Pushes 1 GiB to its own bucket, sends `signal` once the first part is in, and reads the uploads before and after. */
  async function pushInterrupted(signal: (typeof S3_SIGNALS)[number]) {
    const own = mkdtempSync(join(tmpdir(), `mme-signals-push-${signal}-`));
    const bucket = bucketOf(signal);
    const run = spawnCli(['push', gzipLooking('big.tar.gz', GiB, own), '--no-verify', '--s3', `s3://${bucket}/signals/`,
      '--endpoint-url', s3.endpoint], {
      env: { AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey },
      nodeOptions: SMALL_PARTS,
    });
    try {
      await stderrShows(run, 'uploading: ', 'the first uploaded part', 60);
      const during = await s3.listMultipartUploads(bucket);
      run.kill(signal);
      const code = await run.exit;
      return { bucket, during, code, err: run.err(), after: await s3.listMultipartUploads(bucket) };
    } finally {
      run.kill('SIGKILL');
      rmSync(own, { recursive: true, force: true });
    }
  }
  let s3Runs: Record<(typeof S3_SIGNALS)[number], ReturnType<typeof pushInterrupted>> | undefined;
  const pushes = () =>
    (s3Runs ??= { SIGTERM: awaitedLater(pushInterrupted('SIGTERM')), SIGHUP: awaitedLater(pushInterrupted('SIGHUP')) });

  for (const signal of S3_SIGNALS) {
    it(`aborts the multipart upload on ${signal}, leaving no part in S3, and exits 130 (s3rver)`, async () => {
      const run = await pushes()[signal];
      expect(run.during).toHaveLength(1);
      expect(run.code).toBe(130);
      expect(run.err).toContain(`mme-deploy: Push of s3://${run.bucket}/signals/big.tar.gz cancelled. Nothing was left in S3`);
      expect(run.after).toEqual([]);
    }, 90_000);
  }

  describe('when S3 does not let the upload be aborted', () => {
    let home: string;
    let held: ServerResponse[];
    let abortReply: 'denied' | 'never';
    /** Set once the CLI took the test's signal: with a refused abort, parts held until then are answered. */
    let released: boolean;
    let firstPartBytes: number | undefined;
    let server: { url: string; close(): Promise<void> };
    beforeAll(async () => {
      // S3 as far as push needs it: the object is absent, the first part is taken at once, later parts only once the
      // CLI is cancelling (as a slow link would take them) or never, and the abort is refused or never answered.
      server = await standIn((req, body, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (req.method === 'HEAD') return void res.writeHead(404).end();
        if (req.method === 'POST' && url.searchParams.has('uploads')) {
          res.writeHead(200, { 'content-type': 'application/xml' });
          return void res.end('<?xml version="1.0"?><InitiateMultipartUploadResult><Bucket>bkt</Bucket>' +
            '<Key>p/x.tar.gz</Key><UploadId>UPLOAD-7</UploadId></InitiateMultipartUploadResult>');
        }
        if (req.method === 'PUT' && url.searchParams.get('partNumber') === '1') {
          firstPartBytes = body.length;
          return void res.writeHead(200, { ETag: '"e1"' }).end();
        }
        if (req.method === 'PUT') {
          if (abortReply === 'denied' && released) return void res.writeHead(200, { ETag: '"e2"' }).end();
          return void held.push(res);
        }
        if (req.method === 'DELETE' && abortReply === 'denied') {
          res.writeHead(403, { 'content-type': 'application/xml' });
          return void res.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
        }
        if (req.method === 'DELETE') return void held.push(res);
        res.writeHead(400).end();
      });
      home = join(tmpdir(), `mme-signals-home-${process.pid}`);
      mkdirSync(join(home, '.aws'), { recursive: true });
      writeFileSync(join(home, '.aws', 'config'), '[profile ops]\naws_access_key_id = AKIDTEST\naws_secret_access_key = secret\n');
    });
    afterAll(async () => {
      await server.close();
      rmSync(home, { recursive: true, force: true });
    });
    beforeEach(() => {
      held = [];
      released = false;
      firstPartBytes = undefined;
    });
    /** Answers the parts held so far, and any later one at once. */
    const release = () => {
      released = true;
      for (const res of held.splice(0)) res.writeHead(200, { ETag: '"e2"' }).end();
    };

    const push = (archive: string): CliProcess =>
      spawnCli(
        [
          'push', archive, '--no-verify', '--s3', 's3://bkt/p/', '--name', 'x.tar.gz',
          '--endpoint-url', server.url, '--region', 'eu-west-1', '--profile', 'ops',
        ],
        { env: { HOME: home }, nodeOptions: SMALL_PARTS },
      );
    const command = () =>
      `aws s3api abort-multipart-upload --bucket bkt --key p/x.tar.gz --upload-id UPLOAD-7 --endpoint-url ${server.url} ` +
      '--region eu-west-1 --profile ops';

    it('prints the exact abort command, with --endpoint-url, --region and --profile, when the abort is refused', async () => {
      abortReply = 'denied';
      const run = push(gzipLooking('a.tar.gz', 256 * 1024 ** 2));
      await stderrShows(run, 'uploading: ', 'the first part');
      run.kill('SIGTERM');
      // The parts in flight are answered once the CLI has taken the signal (it says it is cancelling), not before: an
      // upload that ran on could otherwise finish.
      await stderrShows(run, 'Cancelling: aborting the multipart upload', 'the cancel notice');
      release();
      expect(await run.exit).toBe(130);
      expect(firstPartBytes).toBe(5 * 1024 ** 2);
      expect(run.err()).toContain(`Some uploaded parts may remain (and are billed); remove them with: ${command()}\n`);
    });

    it('prints the exact abort command when quit by a second signal before the abort finished', async () => {
      abortReply = 'never';
      const run = push(gzipLooking('b.tar.gz', 256 * 1024 ** 2));
      await stderrShows(run, 'uploading: ', 'the first part');
      run.kill('SIGTERM');
      await stderrShows(run, 'Cancelling: aborting the multipart upload', 'the cancel notice');
      run.kill('SIGTERM');
      expect(await run.exit).toBe(130);
      expect(run.err()).toContain(
        `mme-deploy: quit before cleaning up. Parts of the upload may remain in S3 (and are billed); remove them with: ${command()}\n`,
      );
    });
  });
});

describe('plan, local load, invoke and local invoke under signals', () => {
  /** A valid tar.gz of one 4 GiB file of zeros, made of gzip members (a few MB to write, seconds to read). */
  function largeArchive(name: string): string {
    const size = 4 * GiB;
    // One MiB of zeros compressed once, the same member 4,096 times.
    const chunk = gzipSync(Buffer.alloc(1024 ** 2));
    const members = [gzipSync(encodeHeaders({ path: 'm/1/weights.bin', type: 'file', size, mode: 0o644 }))];
    for (let i = 0; i < size / 1024 ** 2; i++) members.push(chunk);
    members.push(gzipSync(endOfArchive(512 + size)));
    const path = join(dir, name);
    writeFileSync(path, Buffer.concat(members));
    return path;
  }

  /** Whether the process has `path` open (Linux /proc). */
  function hasOpen(pid: number | undefined, path: string): boolean {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  }

  it('plan stops reading an archive on SIGTERM and exits 130, printing no plan', async () => {
    const archive = largeArchive('large.tar.gz');
    const run = spawnCli(['plan', archive, '--csv', join(dir, 'curve.csv')], { cwd: dir });
    await until(() => hasOpen(run.pid, archive), 'the archive being read');
    run.kill('SIGTERM');
    expect(await run.exit).toBe(130);
    expect(run.out()).toBe('');
    expect(run.err()).toBe('mme-deploy: interrupted: no plan was printed and no file written.\n');
    expect(readdirSync(dir)).toEqual(['large.tar.gz']);
  });

  it('local load stops waiting for the container on SIGHUP and exits 130', async () => {
    const archive = join(dir, 'small.tar.gz');
    expect((await runCli(['package', repository('small', 10), '-o', archive])).code).toBe(0);
    let loads = 0;
    const container = await standIn((req, _body, res) => {
      if (req.method === 'GET') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      loads += 1; // POST /models: held, as a model that takes long to load
    });
    try {
      const run = spawnCli(['local', 'load', archive, '--url', container.url, '--models-dir', join(dir, 'models')], { cwd: dir });
      await until(() => loads === 1, 'POST /models');
      run.kill('SIGHUP');
      expect(await run.exit).toBe(130);
      expect(run.err()).toContain('mme-deploy: interrupted: POST /models was cancelled (the container may still complete it).');
    } finally {
      await container.close();
    }
  });

  it('invoke and local invoke stop waiting for the answer on SIGTERM and exit 130', async () => {
    let calls = 0;
    const server = await standIn(() => {
      calls += 1; // held: a model that never answers
    });
    try {
      // Both at once: each waits on the server, which holds both requests.
      const invoke = spawnCli(['invoke', 'm.tar.gz', '--endpoint', 'e', '--text', 'text=hi', '--region', 'eu-west-1'], {
        env: { AWS_ACCESS_KEY_ID: 'AKIDTEST', AWS_SECRET_ACCESS_KEY: 'secret', AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: server.url },
      });
      const local = spawnCli(['local', 'invoke', 'm.tar.gz', '--text', 'text=hi', '--url', server.url, '--models-dir', dir]);
      try {
        await until(() => calls === 2, 'InvokeEndpoint and the local invoke', 20, invoke);
        invoke.kill('SIGTERM');
        local.kill('SIGTERM');
        expect(await invoke.exit).toBe(130);
        expect(invoke.err()).toBe('mme-deploy: interrupted: the request was cancelled (the endpoint may still run it).\n');
        expect(await local.exit).toBe(130);
        expect(local.err()).toMatch(/^mme-deploy: interrupted: POST \/models\/[0-9a-f]+\/invoke was cancelled/);
      } finally {
        invoke.kill('SIGKILL');
        local.kill('SIGKILL');
      }
    } finally {
      await server.close();
    }
  });
});
