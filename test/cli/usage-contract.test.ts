// Small contracts of the command line a new user meets in the first minutes: -v, one-line usage errors that say
// where the help is, an --endpoint-url without its scheme, and an output path echoed as it was given.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli';

const ROOT = join(__dirname, '..', '..');

describe('the command line, first contact', () => {
  it('-v and --version print the version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['-v', '--version']) {
      expect(await runCli([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it.each([
    [['validate', '--bogus', 'x'], "mme-deploy: unknown option '--bogus' (see `mme-deploy validate --help`)"],
    [['validate'], "mme-deploy: missing required argument 'path' (see `mme-deploy validate --help`)"],
    [['nosuch'], "mme-deploy: unknown command 'nosuch' (see `mme-deploy --help`)"],
    [
      ['local', 'load', 'a', 'b'],
      "mme-deploy: too many arguments for 'load'. Expected 1 argument but got 2. (see `mme-deploy local load --help`)",
    ],
  ])('a usage error is one line naming the help to read: %j', async (args, line) => {
    const run = await runCli(args);
    expect(run).toEqual({ code: 2, stdout: '', stderr: `${line}\n` });
  });

  it.each([
    ['localhost:4569', 'give the scheme, e.g. --endpoint-url http://localhost:4569'],
    ['127.0.0.1:9000', 'give the scheme, e.g. --endpoint-url http://127.0.0.1:9000'],
    ['ftp://127.0.0.1/', 'S3-compatible stores answer over http or https'],
  ])('--endpoint-url %s: exit 2 before any request, saying how to write it', async (url, hint) => {
    const run = await runCli(['list', '--s3', 's3://models/p/', '--endpoint-url', url]);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `mme-deploy: --endpoint-url: '${url}' is not an http:// or https:// URL: ${hint}\n`,
    });
  });

  it('package -o into a missing absolute directory echoes that directory as given, and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-usage-'));
    try {
      const missing = join(dir, 'missing');
      const run = await runCli(['package', join(ROOT, 'examples', 'sentiment_onnx'), '-o', `${missing}/`], { cwd: ROOT });
      expect(run).toEqual({
        code: 2,
        stdout: '',
        stderr: `mme-deploy: the output directory ${missing}/ does not exist; create it, or choose another -o.\n`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['plan', ['plan', 'models.zip']],
    ['push', ['push', 'models.zip', '--s3', 's3://models/p/', '--endpoint-url', 'http://127.0.0.1:9']],
    ['local load', ['local', 'load', 'models.zip', '--url', 'http://127.0.0.1:9']],
  ])('%s: a zip is recognised first, with one message and exit 2', async (_name, args) => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-zip-'));
    try {
      // A zip's local file header, then anything: no command reads further.
      writeFileSync(join(dir, 'models.zip'), Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64)]));
      const run = await runCli(args, { cwd: dir });
      expect(run).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'mme-deploy: models.zip is a zip file, and SageMaker loads only a gzip-compressed tar archive: make the archive ' +
          'with `mme-deploy package <repository>`.\n',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
