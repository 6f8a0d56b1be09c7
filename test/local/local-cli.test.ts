// `mme-deploy local` against a stand-in container: an HTTP server on 127.0.0.1 that records every request and answers
// as Triton's SageMaker front-end would, so each test checks paths, headers, bodies and the files left on disk.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildInvokeRequest } from '../../lib/kserve/invoke-request';
import { binaryJsonContentType, decodeInferenceRequest } from '../../lib/kserve/kserve-codec';
import { CliIo } from '../../lib/cli/io';
import { captureIo, type CapturedIo } from '../cli/run-cli';
import * as local from '../../lib/cli/local';
import { reportFailure } from '../../lib/cli/program';
import { parseModelConfig } from '../../lib/config/parse';
import { STAGE_RECORD, modelHash } from '../../lib/local/model-store';
import { validateRepository } from '../../lib/repository/validate';

interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface Reply {
  status: number;
  body?: string | Buffer;
  contentType?: string;
}

type Route = (req: RecordedRequest) => Reply | undefined;

class FakeContainer {
  readonly requests: RecordedRequest[] = [];
  private routes: Route[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
        this.requests.push(recorded);
        let reply: Reply | undefined = FakeContainer.unloadWithoutTarget(recorded);
        for (const route of reply ? [] : this.routes) {
          reply = route(recorded);
          if (reply) break;
        }
        reply ??= { status: 400 };
        res.writeHead(reply.status, reply.contentType ? { 'Content-Type': reply.contentType } : {});
        res.end(reply.body ?? '');
      });
    });
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /**
   * Triton's UNLOAD unloads the model the X-Amzn-SageMaker-Target-Model header names and falls back to the hash
   * (server src/sagemaker_server.cc:701-707): no model has that name, so a DELETE without the header leaves the
   * TargetModel loaded. The stand-in answers such a request with an error instead of Triton's belated 200.
   */
  private static unloadWithoutTarget(req: RecordedRequest): Reply | undefined {
    if (req.method !== 'DELETE' || req.headers['x-amzn-sagemaker-target-model'] !== undefined) return undefined;
    return json(400, { error: `stand-in: DELETE ${req.url} without X-Amzn-SageMaker-Target-Model unloads nothing` });
  }

  on(method: string, path: string | RegExp, reply: Reply): this {
    this.routes.push((req) =>
      req.method === method && (typeof path === 'string' ? req.url === path : path.test(req.url)) ? reply : undefined,
    );
    return this;
  }

  /** GET /models/<hash> answers 404 until a test routes it otherwise: nothing is loaded. */
  nothingLoaded(): this {
    return this.on('GET', /^\/models\/[^/]+$/, { status: 404 });
  }

  async stop(): Promise<void> {
    await new Promise<void>((done) => this.server?.close(() => done()));
  }
}

function json(status: number, value: unknown): Reply {
  return { status, body: JSON.stringify(value), contentType: 'application/json' };
}

/** The commands as program.ts runs them: an error becomes its message on stderr and its exit code. */
async function reported(io: CliIo, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (err) {
    return reportFailure(err, io, false);
  }
}
const runLocalLoad = (archive: string, options: local.LocalLoadOptions, io: CliIo) =>
  reported(io, () => local.runLocalLoad(archive, options, io));
const runLocalInvoke = (target: string, options: local.LocalInvokeOptions, io: CliIo) =>
  reported(io, () => local.runLocalInvoke(target, options, io));
const runLocalUnload = (target: string, options: local.LocalConnectionOptions, io: CliIo) =>
  reported(io, () => local.runLocalUnload(target, options, io));
const runLocalList = (options: local.LocalConnectionOptions, io: CliIo) => reported(io, () => local.runLocalList(options, io));

const ENSEMBLE_CONFIG = `name: "ensemble"
platform: "ensemble"
max_batch_size: 8
input [ { name: "text" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "probabilities" data_type: TYPE_FP32 dims: [ 2 ] } ]
ensemble_scheduling { step [ { model_name: "classifier" model_version: -1
  input_map { key: "text" value: "text" } output_map { key: "probabilities" value: "probabilities" } } ] }
`;
const CLASSIFIER_CONFIG = `name: "classifier"
backend: "python"
max_batch_size: 8
input [ { name: "text" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "probabilities" data_type: TYPE_FP32 dims: [ 2 ] } ]
`;

let work: string;
let container: FakeContainer;

beforeEach(async () => {
  work = mkdtempSync(join(tmpdir(), 'mme-local-'));
  container = new FakeContainer();
  await container.start();
});

afterEach(async () => {
  await container.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Archives GNU tar made, by their content (JSON of the files): tar runs once per content, not once per test. */
const tarred = new Map<string, string>();
let tarDir: string;
beforeAll(() => {
  tarDir = mkdtempSync(join(tmpdir(), 'mme-local-archives-'));
});
afterAll(() => rmSync(tarDir, { recursive: true, force: true }));

/**
 * A TargetModel archive laid out as `mme-deploy package` writes it: model directories at the root, `./` prefixed;
 * made by GNU tar, copied to `<work>/<name>` (the name is the TargetModel, not part of the bytes).
 */
function makeArchive(name: string, files: Record<string, string>): string {
  const key = JSON.stringify(files);
  let made = tarred.get(key);
  if (made === undefined) {
    const source = mkdtempSync(join(tarDir, 'src-'));
    for (const [path, content] of Object.entries(files)) {
      const full = join(source, path);
      mkdirSync(join(full, '..'), { recursive: true });
      if (path.endsWith('/')) mkdirSync(full, { recursive: true });
      else writeFileSync(full, content);
    }
    made = join(tarDir, `${tarred.size}.tar.gz`);
    const tar = spawnSync('tar', ['-C', source, '-czf', made, '.'], { encoding: 'utf8' });
    if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
    tarred.set(key, made);
  }
  const archive = join(work, name);
  copyFileSync(made, archive);
  return archive;
}

function sentimentArchive(name = 'sentiment.tar.gz'): string {
  return makeArchive(name, {
    'ensemble/config.pbtxt': ENSEMBLE_CONFIG,
    'ensemble/1/': '',
    'classifier/config.pbtxt': CLASSIFIER_CONFIG,
    'classifier/1/model.py': 'import numpy\n',
  });
}

function base(extra: Record<string, unknown> = {}) {
  return { url: container.url, modelsDir: join(work, 'models'), ...extra };
}

describe('mme-deploy local load', () => {
  it('extracts the archive into <models-dir>/<hash>/model/ and sends the LOAD SageMaker sends', async () => {
    const archive = sentimentArchive();
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const io = captureIo({ cwd: work, env: {} });

    expect(await runLocalLoad(archive, base(), io)).toBe(0);

    const hash = modelHash('sentiment.tar.gz');
    const hashDir = join(work, 'models', hash);
    expect(readFileSync(join(hashDir, 'model', 'ensemble', 'config.pbtxt'), 'utf8')).toBe(ENSEMBLE_CONFIG);
    expect(readFileSync(join(hashDir, 'model', 'classifier', '1', 'model.py'), 'utf8')).toBe('import numpy\n');
    expect(existsSync(join(hashDir, 'model', 'ensemble', '1'))).toBe(true);
    expect(readdirSync(join(work, 'models'))).toEqual([hash]);

    expect(container.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET /models/${hash}`, 'POST /models']);
    const load = container.requests[1]!;
    expect(JSON.parse(load.body.toString('utf8'))).toEqual({ model_name: hash, url: `/opt/ml/models/${hash}/model` });
    expect(load.headers['x-amzn-sagemaker-target-model']).toBe('sentiment.tar.gz');
    expect(load.headers['content-type']).toBe('application/json');
    expect(io.out()).toContain(`hash (model_name): ${hash}`);
  });

  it('names the hash after --name and sends that name as the TargetModel', async () => {
    const archive = sentimentArchive();
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    expect(await runLocalLoad(archive, base({ name: 'sentiment-v2.tar.gz', json: true }), captureIo({ cwd: work, env: {} }))).toBe(0);
    const hash = modelHash('sentiment-v2.tar.gz');
    const load = container.requests.find((r) => r.method === 'POST')!;
    expect(load.headers['x-amzn-sagemaker-target-model']).toBe('sentiment-v2.tar.gz');
    expect(JSON.parse(load.body.toString('utf8')).model_name).toBe(hash);
    expect(JSON.parse(readFileSync(join(work, 'models', hash, STAGE_RECORD), 'utf8')).targetModel).toBe('sentiment-v2.tar.gz');
  });

  it('uses --container-root for the url the container sees', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    await runLocalLoad(sentimentArchive(), base({ containerRoot: '/mnt/models/' }), captureIo({ cwd: work, env: {} }));
    const body = JSON.parse(container.requests.find((r) => r.method === 'POST')!.body.toString('utf8'));
    expect(body.url).toBe(`/mnt/models/${modelHash('sentiment.tar.gz')}/model`);
  });

  it('prints one JSON object with --json', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const io = captureIo({ cwd: work, env: {} });
    await runLocalLoad(sentimentArchive(), base({ json: true }), io);
    const printed = JSON.parse(io.out());
    expect(printed).toMatchObject({
      targetModel: 'sentiment.tar.gz',
      hash: modelHash('sentiment.tar.gz'),
      url: `/opt/ml/models/${modelHash('sentiment.tar.gz')}/model`,
      replaced: false,
    });
    expect(printed.entries).toBeGreaterThanOrEqual(6);
  });

  it('refuses, without touching any file, when the container already serves that TargetModel', async () => {
    const hash = modelHash('sentiment.tar.gz');
    container.on('GET', `/models/${hash}`, json(200, { modelName: hash, modelUrl: '/opt/ml/models/x' }));
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base(), io)).toBe(1);
    expect(io.err()).toMatch(/sentiment\.tar\.gz is already loaded.*mme-deploy local unload sentiment\.tar\.gz/);
    expect(container.requests.some((r) => r.method === 'POST')).toBe(false);
    expect(existsSync(join(work, 'models'))).toBe(false);
  });

  it('replaces the copy an earlier load extracted', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    await runLocalLoad(sentimentArchive(), base(), captureIo({ cwd: work, env: {} }));
    const second = makeArchive('sentiment.tar.gz', { 'only/config.pbtxt': CLASSIFIER_CONFIG, 'only/1/': '' });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(second, base(), io)).toBe(0);
    const modelDir = join(work, 'models', modelHash('sentiment.tar.gz'), 'model');
    expect(readdirSync(modelDir)).toEqual(['only']);
    expect(readdirSync(join(work, 'models'))).toEqual([modelHash('sentiment.tar.gz')]);
    expect(io.out()).toContain('replacing the previous copy');
  });

  it('never overwrites a directory it did not write', async () => {
    const foreign = join(work, 'models', modelHash('sentiment.tar.gz'));
    mkdirSync(join(foreign, 'model'), { recursive: true });
    writeFileSync(join(foreign, 'model', 'mine.txt'), 'keep me');
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base(), io)).toBe(1);
    expect(io.err()).toContain('was not written by `mme-deploy local load`; not overwriting it');
    expect(readFileSync(join(foreign, 'model', 'mine.txt'), 'utf8')).toBe('keep me');
    expect(container.requests.some((r) => r.method === 'POST')).toBe(false);
  });

  it('leaves nothing behind when the archive cannot be extracted', async () => {
    const broken = join(work, 'broken.tar.gz');
    writeFileSync(broken, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03]));
    container.nothingLoaded();
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(broken, base(), io)).toBe(1);
    expect(io.err()).toContain('Could not extract');
    expect(readdirSync(join(work, 'models'))).toEqual([]);
    expect(container.requests.some((r) => r.method === 'POST')).toBe(false);
  });

  it('exits 2 on a missing archive and on a TargetModel Triton would refuse', async () => {
    container.nothingLoaded();
    const missing = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(join(work, 'nope.tar.gz'), base(), missing)).toBe(2);
    expect(missing.err()).toContain('no such archive file');
    const slash = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base({ name: 'team/sentiment.tar.gz' }), slash)).toBe(2);
    expect(slash.err()).toContain('must not contain path traversal characters');
  });

  const failures: Array<[number, Reply, RegExp]> = [
    [409, json(409, { error: 'model already loaded' }), /already loaded \(HTTP 409: model already loaded\).*local unload/],
    [
      507,
      json(507, { error: 'failed to load: CUDA out of memory' }),
      new RegExp(
        /Out of GPU memory loading sentiment\.tar\.gz \(HTTP 507: failed to load: CUDA out of memory\).*/.source +
          /SageMaker the endpoint would now unload the least recently used models/.source,
      ),
    ],
    [
      400,
      json(400, { error: "failed to load 'sentiment.tar.gz', failed to poll from model repository" }),
      /Triton refused to load sentiment\.tar\.gz \(HTTP 400\): failed to load 'sentiment\.tar\.gz', failed to poll/,
    ],
  ];
  it('asks about MME mode when the container answers a bare 400', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 400 });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base(), io)).toBe(1);
    expect(io.err()).toContain('(HTTP 400) with no error text. Was the container started with -e SAGEMAKER_MULTI_MODEL=true?');
  });

  it('asks about the mount when Triton cannot find the extracted files', async () => {
    container.nothingLoaded().on('POST', '/models', json(400, {
      error: "failed to open directory '/opt/ml/models/x/model': No such file or directory",
    }));
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base(), io)).toBe(1);
    expect(io.err()).toContain('Is --models-dir the host directory mounted at /opt/ml/models in the container?');
  });

  it.each(failures)('maps HTTP %d to its message', async (_status, reply, message) => {
    container.nothingLoaded().on('POST', '/models', reply);
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base(), io)).toBe(1);
    expect(io.err()).toMatch(message);
  });

  it('explains the mount when Triton rejects the url', async () => {
    container.nothingLoaded().on('POST', '/models', json(400, {
      error: `Invalid "url" '/mnt/x/model': expected a path of the form /opt/ml/models/<hash>/model[/<subdir>]`,
    }));
    const io = captureIo({ cwd: work, env: {} });
    await runLocalLoad(sentimentArchive(), base({ containerRoot: '/mnt' }), io);
    expect(io.err()).toContain('mount --models-dir there');
  });

  it('says how to start a container when none answers, exiting 2', async () => {
    const url = container.url;
    await container.stop();
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base({ url }), io)).toBe(2);
    expect(io.err()).toMatch(
      /No container answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED.*docker run --gpus all -p 127\.0\.0\.1:8080:8080/,
    );
    expect(existsSync(join(work, 'models'))).toBe(false);
    container = new FakeContainer();
    await container.start();
  });

  it('rejects a URL that is not plain http with no path', async () => {
    for (const url of ['https://127.0.0.1:8080', 'http://127.0.0.1:8080/models', 'localhost']) {
      const io = captureIo({ cwd: work, env: {} });
      expect(await runLocalLoad(sentimentArchive(), base({ url }), io)).toBe(2);
    }
    expect(container.requests).toEqual([]);
  });
});

describe('mme-deploy local invoke', () => {
  async function loaded(): Promise<string> {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    await runLocalLoad(sentimentArchive(), base(), captureIo({ cwd: work, env: {} }));
    container.requests.length = 0;
    return modelHash('sentiment.tar.gz');
  }

  it('sends the body `invoke` builds, shaped by the served ensemble config, to /models/<hash>/invoke', async () => {
    const hash = await loaded();
    container.on('POST', `/models/${hash}/invoke`, json(200, {
      model_name: 'sentiment.tar.gz',
      model_version: '1',
      outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [1, 2], data: [0.25, 0.75] }],
    }));
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalInvoke('sentiment.tar.gz', base({ text: ['text=What a film'], top: '1' }), io)).toBe(0);

    expect(container.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`POST /models/${hash}/invoke`]);
    const sent = container.requests[0]!;
    expect(sent.headers['x-amzn-sagemaker-target-model']).toBe('sentiment.tar.gz');
    const { config } = parseModelConfig(ENSEMBLE_CONFIG);
    const expected = await buildInvokeRequest({ texts: ['text=What a film'] }, config, { cwd: work });
    expect(sent.headers['content-type']).toBe(expected.contentType);
    expect(sent.body.equals(expected.body)).toBe(true);
    expect(decodeInferenceRequest(sent.body, expected.contentType).inputs[0]).toMatchObject({ name: 'text', shape: [1, 1] });
    expect(io.out()).toContain('probabilities  FP32 [1, 2]');
    expect(io.out()).toMatch(/top 1:\s+1\s+0\.75/);
  });

  it('sends binary tensor data with --binary and decodes a binary response', async () => {
    const hash = await loaded();
    const header = Buffer.from(JSON.stringify({
      model_name: 'sentiment.tar.gz',
      outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [1, 2], parameters: { binary_data_size: 8 } }],
    }));
    const data = Buffer.alloc(8);
    data.writeFloatLE(0.5, 0);
    data.writeFloatLE(0.5, 4);
    container.on('POST', `/models/${hash}/invoke`, {
      status: 200,
      body: Buffer.concat([header, data]),
      contentType: binaryJsonContentType(header.length),
    });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalInvoke('sentiment.tar.gz', base({ text: ['text=fine'], binary: true, json: true }), io)).toBe(0);
    expect(String(container.requests[0]!.headers['content-type'])).toMatch(
      /^application\/vnd\.sagemaker-triton\.binary\+json;json-header-size=\d+$/,
    );
    expect(JSON.parse(io.out()).outputs[0]).toMatchObject({ name: 'probabilities', datatype: 'FP32', shape: [1, 2], data: [0.5, 0.5] });
  });

  it('sends --body as-is', async () => {
    const hash = await loaded();
    const request = { inputs: [{ name: 'text', shape: [1, 1], datatype: 'BYTES', data: ['hi'] }] };
    writeFileSync(join(work, 'request.json'), JSON.stringify(request));
    container.on('POST', `/models/${hash}/invoke`, json(200, { outputs: [] }));
    expect(await runLocalInvoke('sentiment.tar.gz', base({ body: 'request.json' }), captureIo({ cwd: work, env: {} }))).toBe(0);
    expect(JSON.parse(container.requests[0]!.body.toString('utf8'))).toEqual(request);
    expect(container.requests[0]!.headers['content-type']).toBe('application/json');
  });

  const failures: Array<[number, Reply, RegExp]> = [
    [
      404,
      { status: 404 },
      new RegExp(
        /sentiment\.tar\.gz is not loaded in the container \(HTTP 404\)\. /.source +
          /Load it first: `mme-deploy local load <archive\.tar\.gz> --name sentiment\.tar\.gz`/.source,
      ),
    ],
    [507, json(507, { error: 'CUDA_OUT_OF_MEMORY' }), /Out of GPU memory running sentiment\.tar\.gz \(HTTP 507: CUDA_OUT_OF_MEMORY\)/],
    [
      400,
      json(400, { error: "unexpected shape for input 'text' for model 'sentiment.tar.gz'" }),
      /Triton refused to invoke sentiment\.tar\.gz \(HTTP 400\): unexpected shape for input 'text'/,
    ],
  ];
  it.each(failures)('maps HTTP %d to its message', async (_status, reply, message) => {
    container.on('POST', /\/invoke$/, reply);
    const io = captureIo({ cwd: work, env: {} });
    expect(
      await runLocalInvoke('sentiment.tar.gz', base({ body: undefined, input: ['text=["x"]'], shape: '1,1', datatype: 'BYTES' }), io),
    ).toBe(1);
    expect(io.err()).toMatch(message);
  });

  it('refuses to guess the served model of an ambiguous archive unless --shape/--datatype say it all', async () => {
    // `local load` refuses such an archive now; a copy staged by hand (or by an older version) can still be there.
    const hash = modelHash('two.tar.gz');
    const staged = join(work, 'models', hash);
    for (const dir of ['a', 'b']) {
      mkdirSync(join(staged, 'model', dir, '1'), { recursive: true });
      writeFileSync(join(staged, 'model', dir, 'config.pbtxt'), CLASSIFIER_CONFIG);
    }
    writeFileSync(join(staged, STAGE_RECORD), JSON.stringify({ targetModel: 'two.tar.gz', archive: 'two.tar.gz' }));
    container.on('POST', `/models/${hash}/invoke`, json(200, { outputs: [] }));

    const guess = captureIo({ cwd: work, env: {} });
    expect(await runLocalInvoke('two.tar.gz', base({ text: ['text=x'] }), guess)).toBe(1);
    expect(guess.err()).toContain('no ensemble');
    expect(container.requests).toEqual([]);

    const explicit = captureIo({ cwd: work, env: {} });
    expect(await runLocalInvoke('two.tar.gz', base({ text: ['text=x'], shape: '1,1', datatype: 'BYTES' }), explicit)).toBe(0);
    expect(container.requests.map((r) => r.url)).toEqual([`/models/${hash}/invoke`]);
  });

  it('exits 2 on a bad --top before sending anything', async () => {
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalInvoke('sentiment.tar.gz', base({ text: ['text=x'], top: 'three' }), io)).toBe(2);
    expect(container.requests).toEqual([]);
  });
});

describe('mme-deploy local unload', () => {
  it('sends DELETE /models/<hash> with no body, naming the TargetModel in its header as SageMaker does', async () => {
    const hash = modelHash('sentiment.tar.gz');
    container.on('DELETE', `/models/${hash}`, { status: 200 });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalUnload('sentiment.tar.gz', base(), io)).toBe(0);
    expect(container.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`DELETE /models/${hash}`]);
    expect(container.requests[0]!.headers['x-amzn-sagemaker-target-model']).toBe('sentiment.tar.gz');
    expect(container.requests[0]!.body.length).toBe(0);
    expect(io.out()).toContain(`Unloaded sentiment.tar.gz (${hash})`);
  });

  it('maps HTTP 404 to "not loaded" and 400 to Triton\'s text', async () => {
    container.on('DELETE', `/models/${modelHash('a.tar.gz')}`, { status: 404 });
    container.on('DELETE', `/models/${modelHash('b.tar.gz')}`, json(400, { error: 'failed to unload' }));
    const a = captureIo({ cwd: work, env: {} });
    expect(await runLocalUnload('a.tar.gz', base(), a)).toBe(1);
    expect(a.err()).toContain('a.tar.gz is not loaded in the container (HTTP 404)');
    const b = captureIo({ cwd: work, env: {} });
    expect(await runLocalUnload('b.tar.gz', base(), b)).toBe(1);
    expect(b.err()).toContain('Triton refused to unload b.tar.gz (HTTP 400): failed to unload');
  });
});

describe('mme-deploy local list', () => {
  it('names loaded and extracted archives by TargetModel, asking the container about each hash', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    await runLocalLoad(sentimentArchive('a.tar.gz'), base(), captureIo({ cwd: work, env: {} }));
    await runLocalLoad(sentimentArchive('b.tar.gz'), base(), captureIo({ cwd: work, env: {} }));
    const a = modelHash('a.tar.gz');
    const fresh = new FakeContainer();
    await container.stop();
    container = fresh;
    await container.start();
    container
      .on('GET', '/models', json(200, { models: [{}, { modelName: 'deadbeef', modelUrl: '/opt/ml/models/deadbeef/model' }] }))
      .on('GET', `/models/${a}`, json(200, { modelName: a, modelUrl: `/opt/ml/models/${a}/model` }))
      .nothingLoaded();

    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalList(base({ json: true }), io)).toBe(0);
    const listed = JSON.parse(io.out());
    expect(listed.unnamed).toBe(1);
    expect(listed.models).toEqual([
      { targetModel: 'a.tar.gz', hash: a, loaded: true, archive: join(work, 'a.tar.gz'), modelUrl: `/opt/ml/models/${a}/model` },
      { targetModel: 'b.tar.gz', hash: modelHash('b.tar.gz'), loaded: false, archive: join(work, 'b.tar.gz') },
      { hash: 'deadbeef', loaded: true, modelUrl: '/opt/ml/models/deadbeef/model' },
    ]);

    const text = captureIo({ cwd: work, env: {} });
    await runLocalList(base(), text);
    expect(text.out()).toMatch(/a\.tar\.gz\s+[0-9a-f]{32}\s+loaded\n/);
    expect(text.out()).toMatch(/b\.tar\.gz\s+[0-9a-f]{32}\s+extracted, not loaded\n/);
    expect(text.out()).toContain('1 entry of GET /models came back as {}');
  });
});

describe('mme-deploy local load applies the MME archive rules to what it extracted', () => {
  it('refuses an archive whose loaded model SageMaker would pick by readdir order, sending and installing nothing', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const archive = makeArchive('two.tar.gz', {
      'a/config.pbtxt': CLASSIFIER_CONFIG,
      'a/1/': '',
      'b/config.pbtxt': CLASSIFIER_CONFIG,
      'b/1/': '',
    });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(archive, base(), io)).toBe(1);
    expect(io.err()).toMatch(/two\.tar\.gz: \.: error \[mme-no-ensemble\] The archive holds 2 model directories \(a, b\) and no ensemble/);
    expect(io.err()).toContain('refused to load');
    expect(container.requests.some((r) => r.method === 'POST')).toBe(false);
    expect(readdirSync(join(work, 'models'))).toEqual([]);
  });

  it('keeps the earlier copy when a new archive of the same TargetModel is refused', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    expect(await runLocalLoad(sentimentArchive('s.tar.gz'), base(), captureIo({ cwd: work, env: {} }))).toBe(0);
    const stray = makeArchive('s.tar.gz', { 'only/config.pbtxt': CLASSIFIER_CONFIG, 'only/1/': '', '__MACOSX/x': '' });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(stray, base(), io)).toBe(1);
    expect(io.err()).toContain('[stray-directory]');
    expect(readdirSync(join(work, 'models', modelHash('s.tar.gz'), 'model')).sort()).toEqual(['classifier', 'ensemble']);
  });

  it('prints warnings and loads when the rules find nothing worse', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const archive = makeArchive('unused.tar.gz', {
      'ensemble/config.pbtxt': ENSEMBLE_CONFIG,
      'ensemble/1/': '',
      'classifier/config.pbtxt': CLASSIFIER_CONFIG,
      'classifier/1/model.py': '',
      'spare/config.pbtxt': CLASSIFIER_CONFIG.replace('classifier', 'spare'),
      'spare/1/': '',
      '__MACOSX/ensemble/._config.pbtxt': '',
    });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(archive, base(), io)).toBe(0);
    expect(io.err()).toContain("warning [mme-unused-model] 'spare' is not a step of ensemble 'ensemble'");
    // Beside the ensemble SageMaker finds, a stray directory is never loaded (sagemaker_server.cc:1033-1035).
    expect(io.err()).toContain('warning [stray-directory]');
  });

  it('extracts links that stay inside the archive, as a conda environment holds them', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const source = mkdtempSync(join(work, 'env-'));
    mkdirSync(join(source, 'ensemble', '1'), { recursive: true });
    writeFileSync(join(source, 'ensemble', 'config.pbtxt'), ENSEMBLE_CONFIG);
    mkdirSync(join(source, 'classifier', '1'), { recursive: true });
    writeFileSync(join(source, 'classifier', 'config.pbtxt'), CLASSIFIER_CONFIG);
    mkdirSync(join(source, 'classifier', 'env', 'bin'), { recursive: true });
    writeFileSync(join(source, 'classifier', 'env', 'bin', 'python3.10'), 'interpreter');
    symlinkSync('python3.10', join(source, 'classifier', 'env', 'bin', 'python'));
    symlinkSync('env/bin', join(source, 'classifier', 'tools'));
    linkSync(join(source, 'classifier', 'env', 'bin', 'python3.10'), join(source, 'classifier', 'env', 'bin', 'python3'));
    const archive = join(work, 'conda.tar.gz');
    expect(spawnSync('tar', ['-C', source, '-czf', archive, '.']).status).toBe(0);

    expect(await runLocalLoad(archive, base(), captureIo({ cwd: work, env: {} }))).toBe(0);
    const env = join(work, 'models', modelHash('conda.tar.gz'), 'model', 'classifier');
    expect(readlinkSync(join(env, 'env', 'bin', 'python'))).toBe('python3.10');
    expect(readFileSync(join(env, 'tools', 'python'), 'utf8')).toBe('interpreter');
    expect(readFileSync(join(env, 'env', 'bin', 'python3'), 'utf8')).toBe('interpreter');
  });

  it.each([
    ['an absolute target', '/etc/passwd', /points to the absolute path "\/etc\/passwd"/],
    ['a target above the archive', '../../../../etc', /points to "..\/..\/..\/..\/etc", outside the archive/],
  ])('refuses a link with %s and installs nothing', async (_title, target, message) => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const source = mkdtempSync(join(work, 'bad-'));
    mkdirSync(join(source, 'only', '1'), { recursive: true });
    writeFileSync(join(source, 'only', 'config.pbtxt'), CLASSIFIER_CONFIG);
    symlinkSync(target, join(source, 'only', 'escape'));
    const archive = join(work, 'bad.tar.gz');
    expect(spawnSync('tar', ['-C', source, '-czf', archive, '.']).status).toBe(0);
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(archive, base(), io)).toBe(1);
    expect(io.err()).toMatch(message);
    expect(readdirSync(join(work, 'models'))).toEqual([]);
    expect(container.requests.some((r) => r.method === 'POST')).toBe(false);
  });
});

describe('mme-deploy local load compares this machine with the target instance', () => {
  const TRT_CONFIG = 'name: "resnet"\nplatform: "tensorrt_plan"\nmax_batch_size: 8\n';

  let bash: string | undefined;
  /** bash's path, for the stubs' #! line (looked up once). */
  const bashPath = () => (bash ??= spawnSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim());

  /** A PATH holding stub nvidia-smi and docker executables, as the real ones answer. */
  function stubTools(gpuLine: string | undefined, inspect?: Record<string, unknown>): NodeJS.ProcessEnv {
    const bin = mkdtempSync(join(work, 'bin-'));
    const bash = bashPath();
    const write = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!${bash}\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    if (gpuLine !== undefined) {
      write('nvidia-smi', `[[ "$1" == --query-gpu=name,driver_version,memory.total,compute_cap ]] || exit 9\nprintf '%s\\n' '${gpuLine}'`);
    }
    if (inspect) {
      const port = new URL(container.url).port;
      write(
        'docker',
        [
          `if [[ "$*" == "ps --filter publish=${port} --format {{.ID}}" ]]; then echo 4f2a9c1d0e3b; exit 0; fi`,
          // printf, a bash builtin: the stubs' PATH holds nothing else.
          `if [[ "$*" == "inspect 4f2a9c1d0e3b" ]]; then printf '%s\\n' '${JSON.stringify([inspect])}'; exit 0; fi`,
          'exit 1',
        ].join('\n'),
      );
    }
    return { PATH: bin };
  }

  function withEnv(io: CapturedIo, env: NodeJS.ProcessEnv): CapturedIo {
    return { ...io, env };
  }

  it('warns that a TensorRT plan built on this GPU cannot run on the target\'s, naming both and the image\'s TensorRT', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const archive = makeArchive('resnet.tar.gz', { 'resnet/config.pbtxt': TRT_CONFIG, 'resnet/1/model.plan': 'engine' });
    const io = withEnv(captureIo({ cwd: work, env: {} }), stubTools('NVIDIA A10G, 550.54.15, 24576, 8.6'));
    expect(await runLocalLoad(archive, base(), io)).toBe(0);
    expect(io.err()).toMatch(
      new RegExp(
        /warning \[tensorrt-plan-gpu\] This machine's NVIDIA A10G has compute capability 8\.6, the target /.source +
          /ml\.g4dn\.xlarge \(NVIDIA T4, compute capability 7\.5\)[\s\S]*'resnet'[\s\S]*/.source +
          /TensorRT 10\.4\.0\.26 \(Triton 24\.09's\)/.source,
      ),
    );
    expect(io.err()).toContain('warning [gpu-memory-larger]');
    expect(container.requests.some((r) => r.method === 'POST')).toBe(true);
  });

  it('says nothing about plans when the GPUs match, and notes that the target needs forward compatibility', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const archive = makeArchive('resnet.tar.gz', { 'resnet/config.pbtxt': TRT_CONFIG, 'resnet/1/model.plan': 'engine' });
    const io = withEnv(captureIo({ cwd: work, env: {} }), stubTools('Tesla T4, 560.35.03, 15360, 7.5'));
    expect(await runLocalLoad(archive, base(), io)).toBe(0);
    expect(io.err()).not.toContain('tensorrt-plan-gpu');
    expect(io.err()).not.toContain('gpu-memory-larger');
    expect(io.err()).toMatch(
      /note \[target-forward-compatibility\] Driver 560\.35\.03 runs Triton 24\.09's CUDA 12\.6\.1 natively here[\s\S]*driver 470/,
    );
  });

  it('warns when the target driver cannot run the container\'s Triton release', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const io = withEnv(captureIo({ cwd: work, env: {} }), stubTools('Tesla T4, 560.35.03, 15360, 7.5'));
    expect(await runLocalLoad(sentimentArchive(), base({ inferenceAmiVersion: 'al2-ami-sagemaker-inference-gpu-3-1' }), io)).toBe(0);
    expect(io.err()).toMatch(
      new RegExp(
        /warning \[target-driver\] Triton 24\.09 \(CUDA 12\.6\.1\) needs driver 560\.35\.03[\s\S]*/.source +
          /driver 550 \(al2-ami-sagemaker-inference-gpu-3-1\)/.source,
      ),
    );
  });

  it('warns when the local container has a larger /dev/shm than an endpoint gets, and uses its Triton release', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const env = stubTools('Tesla T4, 560.35.03, 15360, 7.5', {
      Id: '4f2a9c1d0e3b5a',
      HostConfig: { ShmSize: 1073741824, IpcMode: 'private' },
      Config: { Env: ['PATH=/usr/bin', 'NVIDIA_TRITON_SERVER_VERSION=24.12'] },
    });
    const io = withEnv(captureIo({ cwd: work, env: {} }), env);
    expect(await runLocalLoad(sentimentArchive(), base({ json: true }), io)).toBe(0);
    const printed = JSON.parse(io.out());
    expect(printed.target).toEqual({ instanceType: 'ml.g4dn.xlarge', tritonVersion: '24.12', driverBranch: 470 });
    const shm = printed.findings.find((f: { code: string }) => f.code === 'shm-larger');
    expect(shm.message).toMatch(/container 4f2a9c1d0e3b has a 1024 MiB \/dev\/shm; a SageMaker endpoint gives 64 MiB/);
    expect(io.err()).toBe('');
  });

  it('warns that --ipc=host shares the host\'s /dev/shm', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const env = stubTools('Tesla T4, 560.35.03, 15360, 7.5', {
      Id: 'abc',
      HostConfig: { ShmSize: 67108864, IpcMode: 'host' },
      Config: { Env: [] },
    });
    const io = withEnv(captureIo({ cwd: work, env: {} }), env);
    expect(await runLocalLoad(sentimentArchive(), base(), io)).toBe(0);
    expect(io.err()).toContain("warning [shm-ipc-host] The local container abc shares the host's /dev/shm (--ipc=host)");
  });

  it('notes that the GPU was not compared when nvidia-smi is missing, and still loads', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const io = withEnv(captureIo({ cwd: work, env: {} }), stubTools(undefined));
    expect(await runLocalLoad(sentimentArchive(), base(), io)).toBe(0);
    expect(io.err()).toContain('note [local-gpu-unknown]');
  });

  it('exits 2 on an unknown --instance-type before sending anything', async () => {
    container.nothingLoaded();
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(sentimentArchive(), base({ instanceType: 'ml.m5.xlarge' }), io)).toBe(2);
    expect(io.err()).toContain('--instance-type ml.m5.xlarge: not a GPU instance type');
    expect(container.requests).toEqual([]);
  });

  it('exits 2 on an instance type no GPU multi-model endpoint runs on (g6, multi-GPU), as plan refuses it', async () => {
    for (const instanceType of ['ml.g6.xlarge', 'ml.g4dn.12xlarge']) {
      container.nothingLoaded();
      const io = captureIo({ cwd: work, env: {} });
      expect(await runLocalLoad(sentimentArchive(), base({ instanceType }), io)).toBe(2);
      expect(io.err()).toContain(`--instance-type ${instanceType} (`);
      expect(io.err()).toContain("is not in AWS's list of GPU instance types for multi-model endpoints");
      expect(container.requests).toEqual([]);
    }
  });
});

describe('mme-deploy local load --cpu stages for a container without a GPU', () => {
  const GPU_CLASSIFIER = CLASSIFIER_CONFIG + '# on the endpoint: one instance per GPU\ninstance_group [ { kind: KIND_GPU gpus: [ 0 ] } ]\n';
  const PYTHON_MODEL = 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n';

  function gpuArchive(name = 'gpu.tar.gz'): string {
    return makeArchive(name, {
      'ensemble/config.pbtxt': ENSEMBLE_CONFIG,
      'ensemble/1/': '',
      'classifier/config.pbtxt': GPU_CLASSIFIER,
      'classifier/1/model.py': PYTHON_MODEL,
    });
  }

  const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

  it('rewrites KIND_GPU to KIND_CPU in the staged copy only, says so per model, and sends the LOAD', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const archive = gpuArchive();
    const before = sha256(archive);
    const io = captureIo({ cwd: work, env: {} });

    expect(await runLocalLoad(archive, base({ cpu: true }), io)).toBe(0);

    expect(sha256(archive)).toBe(before);
    const model = join(work, 'models', modelHash('gpu.tar.gz'), 'model');
    const staged = readFileSync(join(model, 'classifier', 'config.pbtxt'), 'utf8');
    expect(staged).toBe(CLASSIFIER_CONFIG + '# on the endpoint: one instance per GPU\ninstance_group [ { kind: KIND_CPU } ]\n');
    expect(parseModelConfig(staged).config.instance_group).toEqual([{ kind: 'KIND_CPU' }]);
    const report = await validateRepository(model, { mme: true, targetModel: 'gpu.tar.gz' });
    expect(report.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);

    const warnings = io.err().split('\n').filter((line) => line.includes('[cpu-mode-rewritten]'));
    expect(warnings).toEqual([
      `${archive}: classifier/config.pbtxt:7:1: warning [cpu-mode-rewritten] 'classifier' rewritten for CPU in the staged copy ` +
        '(the archive is unchanged): \'classifier_0\' KIND_GPU -> KIND_CPU, gpus [0] removed; model.py now runs on a CPU instance, ' +
        'so code that calls CUDA itself fails.',
    ]);
    expect(io.err()).toContain('note [cpu-mode] --cpu: the models run on this machine\'s CPU');
    expect(io.err()).not.toContain('local-gpu-unknown');
    expect(io.out()).toContain('  device:            CPU (config.pbtxt rewritten for classifier)\n');
    expect(container.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET /models/${modelHash('gpu.tar.gz')}`, 'POST /models']);
    expect(JSON.parse(readFileSync(join(model, '..', STAGE_RECORD), 'utf8'))).toMatchObject({ device: 'cpu' });
  });

  it('replaces a config.pbtxt the archive hard-links to another file, never writing through the link', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const source = mkdtempSync(join(work, 'linked-'));
    mkdirSync(join(source, 'classifier', '1'), { recursive: true });
    writeFileSync(join(source, 'classifier', '1', 'model.py'), PYTHON_MODEL);
    writeFileSync(join(source, 'classifier', 'gpu.pbtxt'), GPU_CLASSIFIER);
    linkSync(join(source, 'classifier', 'gpu.pbtxt'), join(source, 'classifier', 'config.pbtxt'));
    const archive = join(work, 'linked.tar.gz');
    expect(spawnSync('tar', ['-C', source, '-czf', archive, '.']).status).toBe(0);

    expect(await runLocalLoad(archive, base({ cpu: true }), captureIo({ cwd: work, env: {} }))).toBe(0);
    const staged = join(work, 'models', modelHash('linked.tar.gz'), 'model', 'classifier');
    expect(readFileSync(join(staged, 'config.pbtxt'), 'utf8')).toContain('kind: KIND_CPU');
    expect(readFileSync(join(staged, 'gpu.pbtxt'), 'utf8')).toBe(GPU_CLASSIFIER);
  });

  it('stages the archive as it is without --cpu', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(gpuArchive(), base(), io)).toBe(0);
    const staged = readFileSync(join(work, 'models', modelHash('gpu.tar.gz'), 'model', 'classifier', 'config.pbtxt'), 'utf8');
    expect(staged).toBe(GPU_CLASSIFIER);
    expect(io.err()).not.toContain('cpu-mode');
  });

  it('reports the rewritten models in --json', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(gpuArchive(), base({ cpu: true, json: true }), io)).toBe(0);
    const printed = JSON.parse(io.out());
    expect(printed).toMatchObject({ device: 'cpu', rewritten: ['classifier'] });
    expect(printed.diagnostics.map((d: { code: string }) => d.code)).toEqual(['cpu-mode-rewritten']);
    expect(printed.findings.map((f: { code: string }) => f.code)).toEqual(['cpu-mode']);
  });

  it('refuses a TensorRT plan with exit 1: nothing staged, nothing sent, an earlier copy kept, the archive unchanged', async () => {
    container.nothingLoaded().on('POST', '/models', { status: 200 });
    expect(await runLocalLoad(gpuArchive('mixed.tar.gz'), base({ cpu: true }), captureIo({ cwd: work, env: {} }))).toBe(0);
    const earlier = readdirSync(join(work, 'models'));
    const posts = container.requests.filter((r) => r.method === 'POST').length;

    const archive = makeArchive('mixed.tar.gz', {
      'ensemble/config.pbtxt': ENSEMBLE_CONFIG,
      'ensemble/1/': '',
      'classifier/config.pbtxt': 'name: "classifier"\nplatform: "tensorrt_plan"\nmax_batch_size: 8\n' +
        'input [ { name: "text" data_type: TYPE_STRING dims: [ 1 ] } ]\n' +
        'output [ { name: "probabilities" data_type: TYPE_FP32 dims: [ 2 ] } ]\ninstance_group [ { kind: KIND_GPU } ]\n',
      'classifier/1/model.plan': 'engine',
    });
    const before = sha256(archive);
    const io = captureIo({ cwd: work, env: {} });
    expect(await runLocalLoad(archive, base({ cpu: true }), io)).toBe(1);

    const lines = io.err().trim().split('\n');
    expect(lines).toEqual([
      `${archive}: classifier/config.pbtxt:2:1: error [cpu-mode-gpu-only] 'classifier' is a TensorRT plan, which runs only on a ` +
        'GPU (Triton: "TensorRT backend supports only GPU device"), so --cpu cannot load it: load the archive without --cpu ' +
        'on a machine with an NVIDIA GPU.',
      `mme-deploy: refused to load ${archive} with --cpu: the errors above name the models that cannot run without a GPU. ` +
        'Nothing was staged or sent to the container.',
    ]);
    expect(sha256(archive)).toBe(before);
    expect(container.requests.filter((r) => r.method === 'POST')).toHaveLength(posts);
    expect(readdirSync(join(work, 'models'))).toEqual(earlier);
    const kept = readFileSync(join(work, 'models', modelHash('mixed.tar.gz'), 'model', 'classifier', 'config.pbtxt'), 'utf8');
    expect(kept).toContain('kind: KIND_CPU');
  });
});
