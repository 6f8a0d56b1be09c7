// Small contracts of the command line a new user meets in the first minutes: -v, one-line usage errors that say
// where the help is, an --endpoint-url without its scheme, and an output path echoed as it was given.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

describe('traffic CSV errors', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mme-traffic-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('plan names the file and the line of a bad row, and both headers it takes', async () => {
    writeFileSync(join(dir, 'w.csv'), '# weights\nmodel,weight\na,1\nb,lots\n');
    writeFileSync(join(dir, 'h.csv'), 'name,count\na,1\n');
    const row = await runCli(['plan', join(ROOT, 'examples', 'sentiment_onnx'), '--traffic', 'w.csv'], { cwd: dir });
    expect(row.code).toBe(2);
    expect(row.stderr).toContain('w.csv: line 4: the weight of b must be a number ≥ 0, found `lots`');
    const header = await runCli(['plan', join(ROOT, 'examples', 'sentiment_onnx'), '--traffic', 'h.csv'], { cwd: dir });
    expect(header.stderr).toContain('h.csv: line 1: the first row must be the header `model,weight` (relative traffic per model) ' +
      'or `timestamp,model` (a recorded trace), found `name,count`');
  });

  it.each([
    ['name,count\na,1\n', 'line 1', 'found `name,count`'],
    ['timestamp,model\n0,a\n', 'line 1', 'found `timestamp,model`: this is a recorded trace, which only `plan` replays'],
    ['model,weight\na,1\n\nb,-2\n', 'line 4', 'the weight of b must be a number ≥ 0, found `-2`'],
  ])('loadtest: %j is refused by line, naming only model,weight, before any AWS call', async (csv, line, what) => {
    writeFileSync(join(dir, 't.csv'), csv);
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const saved = process.env.AWS_ENDPOINT_URL;
    process.env.AWS_ENDPOINT_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const run = await runCli(['loadtest', '--endpoint', 'e', '--rate', '1', '--requests', '1', '--traffic', 't.csv'], {
        cwd: dir,
        env: process.env,
      });
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(run.stderr).toMatch(new RegExp(`^mme-deploy: --traffic t\\.csv: t\\.csv:${line.slice(5)}:1: .*`));
      expect(run.stderr).toContain(what);
      if (line === 'line 1') expect(run.stderr).not.toContain('or `timestamp,model` (a recorded trace)');
      expect(requests).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL;
      else process.env.AWS_ENDPOINT_URL = saved;
      server.close();
    }
  });
});

describe("TargetModel names SageMaker's pattern refuses", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mme-names-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('package --name with a non-ASCII or space-led name: exit 1, the pattern named, no archive written', async () => {
    for (const name of ['modèle.tar.gz', ' lead.tar.gz']) {
      const run = await runCli(['package', join(ROOT, 'examples', 'sentiment_onnx'), '-o', join(dir, 'out.tar.gz'), '--name', name]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('SageMaker takes only printable ASCII in a TargetModel (its pattern \\A\\S[\\p{Print}]*\\z)');
      expect(existsSync(join(dir, 'out.tar.gz'))).toBe(false);
    }
  });

  it('push --name with a non-ASCII name is refused before any request, exit 2', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const run = await runCli([
        'push', join(ROOT, 'examples', 'sentiment_onnx'), '--name', 'modèle.tar.gz', '--s3', 's3://models/p/', '--endpoint-url', url,
      ], { env: process.env });
      // A flag the upload cannot use: a usage error (package reports the same rule among its MME findings, exit 1).
      expect(run.code).toBe(2);
      expect(run.stderr + run.stdout).toContain("TargetModel 'modèle.tar.gz' contains 'è': SageMaker takes only printable ASCII");
      expect(requests).toBe(0);
    } finally {
      server.close();
    }
  });
});
