// `mme-deploy invoke` end to end against a stand-in for SageMaker Runtime: an HTTP server on 127.0.0.1 that the SDK
// reaches through AWS_ENDPOINT_URL, which records each InvokeEndpoint request (REST-JSON: POST
// /endpoints/{EndpointName}/invocations, TargetModel in X-Amzn-SageMaker-Target-Model) and answers with real
// binary+json bodies, or with errors shaped as SageMaker sends them (x-amzn-ErrorType, and for ModelError the
// container's OriginalStatusCode, OriginalMessage and LogStreamArn).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryJsonContentType, decodeInferenceRequest } from '../../lib/kserve/kserve-codec';
import { runCli } from '../cli/run-cli';

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body: Buffer | string;
}

class SageMakerRuntimeStandIn {
  readonly requests: Recorded[] = [];
  answer: Answer = { status: 500, body: '{"message":"no answer set"}' };
  /** Milliseconds to wait before answering (a model that hangs). */
  delayMs = 0;
  private server?: Server;
  /** Answers still waiting out delayMs: stop() drops them, so no timer outlives the test file. */
  private readonly delayed = new Set<NodeJS.Timeout>();
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        const body = Buffer.from(this.answer.body);
        const answer = () => {
          if (res.destroyed) return;
          res.writeHead(this.answer.status, { 'x-amzn-RequestId': 'req-1', 'Content-Length': String(body.length), ...this.answer.headers });
          res.end(body);
        };
        if (this.delayMs > 0) {
          const timer = setTimeout(() => {
            this.delayed.delete(timer);
            answer();
          }, this.delayMs);
          this.delayed.add(timer);
        } else answer();
      });
    });
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** A 200 with a KServe v2 response: a JSON header, then the binary outputs. */
  inferenceResponse(header: object, blobs: Buffer = Buffer.alloc(0)): void {
    const json = Buffer.from(JSON.stringify(header));
    this.answer = {
      status: 200,
      headers: {
        'Content-Type': blobs.length ? binaryJsonContentType(json.length) : 'application/json',
        'x-Amzn-Invoked-Production-Variant': 'AllTraffic',
      },
      body: Buffer.concat([json, blobs]),
    };
  }

  /** InvokeEndpoint's answer when the container failed: HTTP 424 ModelError carrying the container's own status. */
  modelError(originalStatus: number, originalMessage: string): void {
    this.answer = {
      status: 424,
      headers: {
        'Content-Type': 'application/json',
        'x-amzn-ErrorType': 'ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/',
      },
      body: JSON.stringify({
        ErrorCode: originalStatus >= 500 ? 'SERVER_ERROR_FROM_MODEL' : 'CLIENT_ERROR_FROM_MODEL',
        LogStreamArn: 'arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/mme',
        Message:
          `Received ${originalStatus >= 500 ? 'server' : 'client'} error (${originalStatus}) from ` +
          `primary with message "${originalMessage}". See the log group for more information.`,
        OriginalMessage: originalMessage,
        OriginalStatusCode: originalStatus,
      }),
    };
  }

  error(status: number, type: string, message: string): void {
    this.answer = { status, headers: { 'Content-Type': 'application/json', 'x-amzn-ErrorType': type }, body: JSON.stringify({ message }) };
  }

  async stop(): Promise<void> {
    for (const timer of this.delayed) clearTimeout(timer);
    this.delayed.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((done) => this.server?.close(() => done()));
  }
}

const HALF_MODEL = `name: "half"
backend: "tensorrt"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP16 dims: [ 2 ] } ]
output [ { name: "Y" data_type: TYPE_FP16 dims: [ 2 ] }, { name: "ID" data_type: TYPE_INT64 dims: [ 1 ] } ]
`;

let standIn: SageMakerRuntimeStandIn;
let dir: string;
const saved = process.env.AWS_ENDPOINT_URL;

beforeAll(async () => {
  standIn = new SageMakerRuntimeStandIn();
  await standIn.start();
  process.env.AWS_ENDPOINT_URL = standIn.url;
});
afterAll(async () => {
  if (saved === undefined) delete process.env.AWS_ENDPOINT_URL;
  else process.env.AWS_ENDPOINT_URL = saved;
  await standIn.stop();
});
beforeEach(() => {
  standIn.requests.length = 0;
  standIn.delayMs = 0;
  dir = mkdtempSync(join(tmpdir(), 'invoke-endpoint-'));
  mkdirSync(join(dir, 'half'));
  writeFileSync(join(dir, 'half', 'config.pbtxt'), HALF_MODEL);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const invoke = (...args: string[]) => runCli(['invoke', '--endpoint', 'mme', ...args], { cwd: dir });

describe('invoke through the SageMaker Runtime API', () => {
  it('sends an FP16 model binary+json without --binary, and prints FP16 and INT64 outputs exactly', async () => {
    const y = Buffer.alloc(4);
    y.writeUInt16LE(0x3c00, 0); // 1
    y.writeUInt16LE(0x8000, 2); // -0
    const id = Buffer.alloc(8);
    id.writeBigInt64LE(9007199254740993n);
    standIn.inferenceResponse(
      {
        model_name: 'half.tar.gz',
        model_version: '1',
        outputs: [
          { name: 'Y', datatype: 'FP16', shape: [1, 2], parameters: { binary_data_size: 4 } },
          { name: 'ID', datatype: 'INT64', shape: [1, 1], parameters: { binary_data_size: 8 } },
        ],
      },
      Buffer.concat([y, id]),
    );
    const run = await invoke('half.tar.gz', '--variant', 'AllTraffic', '--model', 'half', '--input', 'X=[0.1,-2]');
    expect([run.code, run.stderr]).toEqual([0, expect.stringMatching(/^\(\d+ ms round trip on variant AllTraffic;/)]);

    expect(standIn.requests).toHaveLength(1);
    const sent = standIn.requests[0]!;
    expect([sent.method, sent.path]).toEqual(['POST', '/endpoints/mme/invocations']);
    expect(sent.headers['x-amzn-sagemaker-target-model']).toBe('half.tar.gz');
    expect(sent.headers['x-amzn-sagemaker-target-variant']).toBe('AllTraffic');
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=test-access-key\/\d{8}\/us-east-1\/sagemaker\//);
    const contentType = String(sent.headers['content-type']);
    expect(contentType).toMatch(/^application\/vnd\.sagemaker-triton\.binary\+json;json-header-size=\d+$/);
    const request = decodeInferenceRequest(sent.body, contentType);
    expect(request.parameters).toEqual({ binary_data_output: true });
    expect(request.inputs[0]).toMatchObject({ name: 'X', datatype: 'FP16', shape: [1, 2] });
    expect(sent.body.subarray(-4).toString('hex')).toBe('662e00c0'); // 0.1 -> 0x2e66 (nearest), -2 -> 0xc000

    expect(run.stdout).toBe(
      'model half.tar.gz (version 1)\nY  FP16 [1, 2]\n  values: [1, -0]\nID  INT64 [1, 1]\n  values: [9007199254740993]\n',
    );
  });

  it('reads INT64/UINT64 beyond 2^53 and -0.0 from a JSON response exactly (--json)', async () => {
    writeFileSync(join(dir, 'config.pbtxt'), 'name: "ids"\nbackend: "python"\ninput [ { name: "A" data_type: TYPE_INT64 dims: [ 2 ] } ]\n');
    standIn.answer = {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body:
        '{"model_name":"ids.tar.gz","model_version":"1","outputs":[' +
        '{"name":"U","datatype":"UINT64","shape":[2],"data":[18446744073709551615,9007199254740993]},' +
        '{"name":"Z","datatype":"FP32","shape":[2],"data":[-0.0,0.5]}]}',
    };
    const run = await invoke('ids.tar.gz', '--model', '.', '--input', 'A=["9007199254740993",-1]', '--json');
    expect(run.code).toBe(0);
    expect(standIn.requests[0]!.headers['content-type']).toBe('application/json');
    expect(standIn.requests[0]!.body.toString()).toBe(
      '{"parameters":{"binary_data_output":true},"inputs":[{"name":"A","shape":[2],"datatype":"INT64","data":[9007199254740993,-1]}]}',
    );
    const printed = JSON.parse(run.stdout) as { outputs: { name: string; data: unknown[] }[] };
    expect(printed.outputs.map((o) => [o.name, o.data])).toEqual([
      ['U', ['18446744073709551615', '9007199254740993']],
      ['Z', ['-0', 0.5]],
    ]);
  });

  it('explains a ModelError 507 with the container\'s text, what to do and the log stream; exit 1, no stack', async () => {
    standIn.modelError(507, '{"error":"failed to load \'half.tar.gz\' version 1: CUDA out of memory. Tried to allocate 1.5 GiB"}');
    const run = await invoke('half.tar.gz', '--model', 'half', '--input', 'X=[1,2]');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        /^mme-deploy: Out of GPU or host memory loading half\.tar\.gz \(HTTP 507: failed to load 'half\.tar\.gz' /.source +
          /version 1: CUDA out of memory\. Tried to allocate 1\.5 GiB\)\. SageMaker answers a 507 by unloading/.source,
      ),
    );
    expect(run.stderr).toContain('environment.modelLoadGpuLimit (SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT)');
    expect(run.stderr).toMatch(/Container logs: arn:aws:logs:us-east-1:123456789012:log-group:\/aws\/sagemaker\/Endpoints\/mme\n$/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('explains a ModelError 404 with an empty body as a TargetModel to check, not "HTTP 404: ."', async () => {
    standIn.modelError(404, '');
    const run = await invoke('resnet', '--input', 'X=[1]');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'mme-deploy: resnet is not loaded in the container that took the call (HTTP 404). Check that resnet is the name of an ' +
        "archive under the endpoint's S3 prefix (`mme-deploy list --endpoint mme`), spelled exactly, with its .tar.gz; then " +
        'call again: SageMaker loads a model on the call that needs it. ' +
        'Container logs: arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/mme\n',
    );
  });

  it('turns Triton\'s refusal of FP16 JSON output into advice, when invoke could not know the datatypes', async () => {
    standIn.modelError(400, '{"error":"sending FP16 data via JSON is not supported. Please use the binary data format for output"}');
    const run = await invoke('half.tar.gz', '--input', 'X=[1,2]');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'mme-deploy: Triton refused to invoke half.tar.gz (HTTP 400): sending FP16 data via JSON is not supported. Please use the ' +
        'binary data format for output. Triton takes and returns FP16 and BF16 only as binary tensor data: invoke sends ' +
        'binary+json by itself when it knows the datatypes (give --model <archive or directory>), or pass --binary.',
    );
  });

  it('names a missing endpoint', async () => {
    standIn.error(400, 'ValidationError', 'Endpoint mme of account 123456789012 not found.');
    const run = await invoke('half.tar.gz', '--input', 'X=[1]', '--region', 'us-east-1');
    expect([run.code, run.stderr]).toEqual([1, "mme-deploy: Endpoint 'mme' does not exist in us-east-1. Check the name and --region.\n"]);
  });

  it('refuses a ragged array and --no-binary for FP16 before sending anything (exit 2)', async () => {
    const ragged = await invoke('half.tar.gz', '--input', 'X=[[1,2],[3]]');
    expect([ragged.code, ragged.stderr]).toEqual([
      2,
      "mme-deploy: --input X: input 'X' is a ragged array: [1] is a row of 1 value but [0] is a row of 2 values. " +
        'A tensor is rectangular: give every row the same length, or give a flat array and --shape.\n',
    ]);
    const json = await invoke('half.tar.gz', '--model', 'half', '--input', 'X=[1,2]', '--no-binary');
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('receiving FP16 data via JSON is not supported. Please use the binary data format for input X');
    expect(standIn.requests).toEqual([]);
  });
});

describe('invoke bounds what it waits for and what it holds', () => {
  it('gives up after --timeout with what to do, and says the endpoint may still run the request (exit 1)', async () => {
    standIn.inferenceResponse({ outputs: [{ name: 'Y', datatype: 'FP32', shape: [1], data: [1] }] });
    standIn.delayMs = 8000;
    const result = await invoke('m.tar.gz', '--input', 'X=[1]', '--timeout', '1');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No answer from mme for m.tar.gz within 1 s (--timeout); the endpoint may still run the request.');
    expect(standIn.requests).toHaveLength(1);
  }, 60_000);

  it('refuses a response over --max-response without printing it (exit 1)', async () => {
    const data = Buffer.alloc(2 * 1024 * 1024, 1);
    standIn.inferenceResponse(
      { outputs: [{ name: 'Y', datatype: 'UINT8', shape: [data.length], parameters: { binary_data_size: data.length } }] },
      data,
    );
    const result = await invoke('m.tar.gz', '--input', 'X=[1]', '--max-response', '1');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/The response is 2\.0 MiB, over the 1 MiB --max-response allows; nothing was printed/);
    expect(result.stdout).toBe('');
    const fits = await invoke('m.tar.gz', '--input', 'X=[1]', '--max-response', '3');
    expect(fits.code).toBe(0);
  }, 60_000);

  it('asks for binary outputs by default and prints a BYTES output that is not UTF-8 and NaN from JSON', async () => {
    const blob = Buffer.from([2, 0, 0, 0, 0xff, 0x00]);
    standIn.inferenceResponse({ outputs: [{ name: 'B', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: 6 } }] }, blob);
    const bytes = await invoke('m.tar.gz', '--input', 'X=[1]', '--json');
    expect(bytes.code).toBe(0);
    expect(JSON.parse(standIn.requests[0]!.body.toString()).parameters).toEqual({ binary_data_output: true });
    expect(JSON.parse(bytes.stdout).outputs[0].data).toEqual([{ base64: Buffer.from([0xff, 0x00]).toString('base64') }]);
    standIn.answer = {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: '{"outputs":[{"name":"Y","datatype":"FP32","shape":[3],"data":[NaN,Infinity,-Infinity]}]}',
    };
    const special = await invoke('m.tar.gz', '--input', 'X=[1]', '--json');
    expect(special.code).toBe(0);
    expect(JSON.parse(special.stdout).outputs[0].data).toEqual(['NaN', 'Infinity', '-Infinity']);
  }, 60_000);
});
