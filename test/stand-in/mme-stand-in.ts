// A stand-in for one SageMaker GPU multi-model endpoint on 127.0.0.1, reached by the AWS SDK through
// AWS_ENDPOINT_URL: the four services `smoke` and `loadtest` call, on one port.
//   SageMaker (awsJson1_1, X-Amz-Target SageMaker.*): DescribeEndpoint, DescribeEndpointConfig, DescribeModel;
//   SageMaker Runtime (REST): POST /endpoints/{name}/invocations with X-Amzn-SageMaker-Target-Model;
//   S3 (REST-XML, path style since the host is an IP address): ListObjectsV2, GetObject, HeadObject;
//   CloudWatch (awsJson1_0, X-Amz-Target GraniteServiceVersion20100801.GetMetricData).
// The endpoint keeps a least-recently-used cache of `capacity` TargetModels per instance; a model not loaded takes
// `loadMs` to load (requests for it meanwhile wait, and are cache misses, as on SageMaker), and answers with the
// outputs its config declares, or with Triton's errors (through ModelError, HTTP 424) for the faults seeded per model.
// It publishes what such an endpoint publishes to CloudWatch, as AWS defines each metric (awsdocs/amazon-sagemaker-
// developer-guide:doc_source/monitoring-cloudwatch.md, "Multi-Model Endpoint Model Loading Metrics"): ModelCacheHit per
// invocation, 1 when "the model was already loaded", so 0 for a request that finds its model still loading;
// ModelLoadingWaitTime per invocation that "has waited for the target model to be downloaded, or loaded", the one
// that started the load and those that came while it ran, each with its own wait; ModelLoadingTime per load (the time
// it really took, timers being late on a busy machine); ModelUnloadingTime per eviction; LoadedModelCount, GPU
// utilization and memory; aggregated per Period as GetMetricData does.

import { readdirSync, readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ModelConfig } from '../../lib/config/model-config-schema';
import { kserveDatatypeOf } from '../../lib/kserve/invoke-request';
import { readInvokeModelConfig } from '../../lib/aws/invoke-model-config';
import {
  binaryJsonContentType,
  decodeInferenceRequest,
  elementCount,
  encodeTensorData,
  InferenceRequest,
  KServeDatatype,
  TensorElement,
} from '../../lib/kserve/kserve-codec';

/** A fault seeded in one TargetModel. */
export type StandInFault =
  /** Triton cannot load it: ModelError 400 with Triton's load failure text. */
  | 'load-fails'
  /** Loading it runs out of GPU memory: ModelError 507, after SageMaker's own unload-and-retry. */
  | 'out-of-memory'
  /** It answers, but its first output has a shape the config does not declare. */
  | 'wrong-shape'
  /** It answers, but its first output has another datatype than the config declares. */
  | 'wrong-datatype'
  /** It answers without its last output. */
  | 'missing-output';

export interface StandInModel {
  readonly targetModel: string;
  readonly archive: Buffer;
  readonly config: ModelConfig;
  readonly fault?: StandInFault;
}

export interface StandInOptions {
  readonly endpointName?: string;
  readonly bucket?: string;
  readonly prefix?: string;
  /** TargetModels one instance keeps loaded at once. @default 4 */
  readonly capacity?: number;
  /** Milliseconds a load takes. @default 50 */
  readonly loadMs?: number;
  /** Milliseconds an invocation of a loaded model takes. @default 0 */
  readonly inferMs?: number;
  readonly instanceType?: string;
}

interface Datum {
  readonly time: number;
  readonly value: number;
}

interface Loaded {
  /** Set when the load has finished: a request is a cache hit only then. */
  loaded: boolean;
  ready: Promise<void>;
}

export class MmeStandIn {
  readonly endpointName: string;
  readonly bucket: string;
  readonly prefix: string;
  capacity: number;
  loadMs: number;
  inferMs: number;
  /** Until this time (ms since the epoch), every invocation is held before it is answered: an endpoint that stalls. */
  stallUntil = 0;
  readonly instanceType: string;
  url = '';
  /** Invocations received, by TargetModel. */
  readonly invocations = new Map<string, number>();
  /** The last request each TargetModel received, decoded. */
  readonly lastRequest = new Map<string, InferenceRequest>();
  private readonly models = new Map<string, StandInModel>();
  private readonly loaded = new Map<string, Loaded>();
  private readonly metrics = new Map<string, Datum[]>();
  private server?: Server;

  constructor(options: StandInOptions = {}) {
    this.endpointName = options.endpointName ?? 'mme';
    this.bucket = options.bucket ?? 'models-bucket';
    this.prefix = options.prefix ?? 'mme/';
    this.capacity = options.capacity ?? 4;
    this.loadMs = options.loadMs ?? 50;
    this.inferMs = options.inferMs ?? 0;
    this.instanceType = options.instanceType ?? 'ml.g4dn.xlarge';
  }

  /** Adds a TargetModel from its archive (its served config is read as `invoke --model` reads it). */
  async addArchive(targetModel: string, path: string, fault?: StandInFault): Promise<void> {
    const { config } = await readInvokeModelConfig(path);
    this.models.set(targetModel, { targetModel, archive: readFileSync(path), config, ...(fault ? { fault } : {}) });
  }

  /** Every `*.tar.gz` of a directory, under its file name. */
  async addDirectory(dir: string, faults: ReadonlyMap<string, StandInFault> = new Map()): Promise<void> {
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.tar.gz')).sort()) {
      await this.addArchive(name, join(dir, name), faults.get(name));
    }
  }

  /** Forgets every load and every metric: a freshly created endpoint. */
  reset(): void {
    this.loaded.clear();
    this.metrics.clear();
    this.invocations.clear();
  }

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.route(req, Buffer.concat(chunks), res).catch((err: Error) => send(res, 500, { message: err.message }));
      });
    });
    // Many keep-alive sockets from one load test.
    this.server.maxConnections = 10_000;
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((done) => this.server!.listen(port, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }

  private async route(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const target = String(req.headers['x-amz-target'] ?? '');
    if (req.method === 'POST' && /^\/endpoints\/[^/]+\/invocations$/.test(url.pathname)) {
      return this.invoke(req, url, body, res);
    }
    if (target.startsWith('SageMaker.')) return this.sageMaker(target.slice('SageMaker.'.length), JSON.parse(body.toString()), res);
    if (target === 'GraniteServiceVersion20100801.GetMetricData') return this.getMetricData(JSON.parse(body.toString()), res);
    return this.s3(req, url, res);
  }

  // -------------------------------------------------------------------------------------------------------------
  // SageMaker control plane.

  private sageMaker(operation: string, input: Record<string, string>, res: ServerResponse): void {
    const json = { 'Content-Type': 'application/x-amz-json-1.1' };
    const notFound = (message: string) =>
      send(res, 400, { __type: 'ValidationException', message }, { ...json, 'x-amzn-ErrorType': 'ValidationException' });
    switch (operation) {
      case 'DescribeEndpoint':
        if (input.EndpointName !== this.endpointName) return notFound(`Could not find endpoint "${input.EndpointName}".`);
        return send(res, 200, {
          EndpointName: this.endpointName,
          EndpointArn: `arn:aws:sagemaker:us-east-1:123456789012:endpoint/${this.endpointName}`,
          EndpointConfigName: `${this.endpointName}-config`,
          EndpointStatus: 'InService',
          ProductionVariants: [{ VariantName: 'AllTraffic', CurrentInstanceCount: 1, DesiredInstanceCount: 1 }],
          CreationTime: 1764547200,
          LastModifiedTime: 1764547200,
        }, json);
      case 'DescribeEndpointConfig':
        return send(res, 200, {
          EndpointConfigName: input.EndpointConfigName,
          ProductionVariants: [
            {
              VariantName: 'AllTraffic',
              ModelName: `${this.endpointName}-model`,
              InstanceType: this.instanceType,
              InitialInstanceCount: 1,
            },
          ],
        }, json);
      case 'DescribeModel':
        return send(res, 200, {
          ModelName: input.ModelName,
          PrimaryContainer: {
            Image: '785573368785.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3',
            Mode: 'MultiModel',
            ModelDataUrl: `s3://${this.bucket}/${this.prefix}`,
          },
        }, json);
      default:
        return send(res, 400, { __type: 'UnknownOperationException', message: operation }, json);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // S3: the archives under the prefix.

  private s3(req: IncomingMessage, url: URL, res: ServerResponse): void {
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    if (bucket !== this.bucket) return xml(res, 404, '<Error><Code>NoSuchBucket</Code><Message>no such bucket</Message></Error>');
    if (key === '') {
      const prefix = url.searchParams.get('prefix') ?? '';
      const contents = [...this.models.values()]
        .map((m) => ({ key: `${this.prefix}${m.targetModel}`, size: m.archive.length }))
        .filter((o) => o.key.startsWith(prefix))
        .sort((a, b) => (a.key < b.key ? -1 : 1))
        .map((o) => `<Contents><Key>${o.key}</Key><Size>${o.size}</Size><LastModified>2026-12-01T12:00:00.000Z</LastModified></Contents>`);
      return xml(res, 200, `<ListBucketResult><Name>${bucket}</Name><Prefix>${prefix}</Prefix><KeyCount>${contents.length}</KeyCount>` +
        `<IsTruncated>false</IsTruncated>${contents.join('')}</ListBucketResult>`);
    }
    const model = key.startsWith(this.prefix) ? this.models.get(key.slice(this.prefix.length)) : undefined;
    if (!model) return xml(res, 404, '<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
    res.writeHead(200, { 'Content-Type': 'application/gzip', 'Content-Length': String(model.archive.length) });
    res.end(req.method === 'HEAD' ? undefined : model.archive);
  }

  // -------------------------------------------------------------------------------------------------------------
  // InvokeEndpoint.

  private async invoke(req: IncomingMessage, url: URL, body: Buffer, res: ServerResponse): Promise<void> {
    const endpoint = decodeURIComponent(url.pathname.split('/')[2]!);
    const targetModel = String(req.headers['x-amzn-sagemaker-target-model'] ?? '');
    if (endpoint !== this.endpointName) {
      return sageMakerError(res, 400, 'ValidationError', `Endpoint ${endpoint} of account 123456789012 not found.`);
    }
    const model = this.models.get(targetModel);
    if (!model) {
      const key = `s3://${this.bucket}/${this.prefix}${targetModel}`;
      return sageMakerError(res, 400, 'ValidationError', `Failed to download model data(bucket: ${this.bucket}, key: ${key}).`);
    }
    this.invocations.set(targetModel, (this.invocations.get(targetModel) ?? 0) + 1);
    const now = Date.now();
    let entry = this.loaded.get(targetModel);
    const hit = entry?.loaded === true;
    this.record('ModelCacheHit', hit ? 1 : 0);
    if (!entry) entry = this.load(model, now);
    // Most recently used last: the map's order is the LRU order (timestamps tie within a millisecond).
    this.loaded.delete(targetModel);
    this.loaded.set(targetModel, entry);
    this.record('LoadedModelCount', this.loaded.size);
    this.record('GPUMemoryUtilization', (100 * this.loaded.size) / this.capacity);
    if (!hit) {
      await entry.ready;
      this.record('ModelLoadingWaitTime', (Date.now() - now) * 1000);
    }
    if (model.fault === 'load-fails' || model.fault === 'out-of-memory') {
      this.loaded.delete(targetModel);
      return model.fault === 'load-fails'
        ? modelError(res, 400, `failed to load '${model.config.name}', failed to poll from model repository`)
        : modelError(res, 507, `failed to load '${model.config.name}', CUDA out of memory. Tried to allocate 2.00 GiB`);
    }
    const wait = Math.max(this.stallUntil - Date.now(), this.inferMs);
    // Unreferenced: a stall still under way when the test stops the stand-in does not keep the test run alive.
    if (wait > 0) await new Promise((done) => setTimeout(done, wait).unref());
    this.record('GPUUtilization', 40);
    this.answer(model, body, String(req.headers['content-type'] ?? ''), res);
  }

  private load(model: StandInModel, now: number): Loaded {
    while (this.loaded.size >= this.capacity) {
      this.loaded.delete(this.loaded.keys().next().value!);
      this.record('ModelUnloadingTime', 2_000);
    }
    const entry: Loaded = {
      loaded: false,
      ready: new Promise((done) =>
        setTimeout(() => {
          entry.loaded = true;
          this.record('ModelLoadingTime', (Date.now() - now) * 1000);
          done();
        }, this.loadMs),
      ),
    };
    this.loaded.set(model.targetModel, entry);
    return entry;
  }

  /** Triton's answer: each output the config declares, zeros in its shape (batch dim from the first input). */
  private answer(model: StandInModel, body: Buffer, contentType: string, res: ServerResponse): void {
    let request;
    try {
      request = decodeInferenceRequest(body, contentType);
    } catch (err) {
      return modelError(res, 400, (err as Error).message);
    }
    this.lastRequest.set(model.targetModel, request);
    const { config } = model;
    for (const input of config.input ?? []) {
      const given = request.inputs.find((t) => t.name === input.name);
      if (!given && !input.optional) {
        return modelError(res, 400, `[request id: <id_unknown>] expected ${(config.input ?? []).length} inputs but got ` +
          `${request.inputs.length} inputs for model '${config.name}'. Got input(s) [${request.inputs.map((t) => `'${t.name}'`)}]`);
      }
      const datatype = kserveDatatypeOf(input.data_type);
      if (given && given.datatype !== datatype) {
        return modelError(res, 400, `[request id: <id_unknown>] inference input '${input.name}' data-type is '${given.datatype}', ` +
          `but model '${config.name}' expects '${datatype}'`);
      }
    }
    const batching = (config.max_batch_size ?? 0) > 0;
    const batch = batching ? (request.inputs[0]?.shape[0] ?? 1) : 1;
    let outputs = (config.output ?? []).map((output) => {
      let datatype = kserveDatatypeOf(output.data_type) ?? 'FP32';
      const dims = (output.dims ?? []).map((d) => (Number(d) < 0 ? 1 : Number(d)));
      let shape = batching ? [batch, ...dims] : dims;
      if (model.fault === 'wrong-shape' && output === config.output![0]) shape = [...shape, 2];
      if (model.fault === 'wrong-datatype' && output === config.output![0]) datatype = datatype === 'FP32' ? 'INT32' : 'FP32';
      return { name: output.name ?? '', datatype, shape };
    });
    if (model.fault === 'missing-output') outputs = outputs.slice(0, -1);
    const blobs = outputs.map((o) => encodeTensorData(o.datatype, zeros(o.datatype, elementCount(o.shape)), o.name));
    const header = Buffer.from(JSON.stringify({
      model_name: config.name,
      model_version: '1',
      outputs: outputs.map((o, i) => ({ ...o, parameters: { binary_data_size: blobs[i]!.length } })),
    }));
    res.writeHead(200, {
      'Content-Type': binaryJsonContentType(header.length),
      'x-Amzn-Invoked-Production-Variant': 'AllTraffic',
      'x-amzn-RequestId': 'stand-in',
    });
    res.end(Buffer.concat([header, ...blobs]));
  }

  // -------------------------------------------------------------------------------------------------------------
  // CloudWatch.

  private record(name: string, value: number): void {
    const data = this.metrics.get(name) ?? [];
    data.push({ time: Date.now(), value });
    this.metrics.set(name, data);
  }

  private getMetricData(input: GetMetricDataInput, res: ServerResponse): void {
    const start = input.StartTime * 1000;
    const end = input.EndTime * 1000;
    const results = input.MetricDataQueries.map((query) => {
      const { Metric, Period, Stat } = query.MetricStat;
      const dimensions = new Map(Metric.Dimensions.map((d) => [d.Name, d.Value]));
      const ours = dimensions.get('EndpointName') === this.endpointName && dimensions.get('VariantName') === 'AllTraffic';
      const namespace = NAMESPACES[Metric.MetricName];
      const data = ours && namespace === Metric.Namespace ? (this.metrics.get(Metric.MetricName) ?? []) : [];
      const buckets = new Map<number, number[]>();
      for (const datum of data) {
        if (datum.time < start || datum.time >= end) continue;
        const bucket = Math.floor(datum.time / (Period * 1000)) * Period;
        buckets.set(bucket, [...(buckets.get(bucket) ?? []), datum.value]);
      }
      const times = [...buckets.keys()].sort((a, b) => a - b);
      return {
        Id: query.Id,
        Label: Metric.MetricName,
        StatusCode: 'Complete',
        Timestamps: times,
        Values: times.map((t) => statistic(Stat, buckets.get(t)!)),
      };
    });
    send(res, 200, { MetricDataResults: results, Messages: [] }, { 'Content-Type': 'application/x-amz-json-1.0' });
  }
}

const NAMESPACES: Record<string, string> = {
  ModelCacheHit: 'AWS/SageMaker',
  ModelLoadingWaitTime: 'AWS/SageMaker',
  ModelLoadingTime: 'AWS/SageMaker',
  ModelUnloadingTime: 'AWS/SageMaker',
  LoadedModelCount: '/aws/sagemaker/Endpoints',
  GPUUtilization: '/aws/sagemaker/Endpoints',
  GPUMemoryUtilization: '/aws/sagemaker/Endpoints',
};

interface GetMetricDataInput {
  readonly StartTime: number;
  readonly EndTime: number;
  readonly MetricDataQueries: readonly {
    readonly Id: string;
    readonly MetricStat: {
      readonly Metric: { readonly Namespace: string; readonly MetricName: string; readonly Dimensions: { Name: string; Value: string }[] };
      readonly Period: number;
      readonly Stat: string;
    };
  }[];
}

function statistic(stat: string, values: readonly number[]): number {
  const sum = values.reduce((a, b) => a + b, 0);
  switch (stat) {
    case 'Sum':
      return sum;
    case 'SampleCount':
      return values.length;
    case 'Maximum':
      return Math.max(...values);
    case 'Minimum':
      return Math.min(...values);
    default:
      return sum / values.length;
  }
}

function zeros(datatype: KServeDatatype, count: number): TensorElement[] {
  const zero: TensorElement = datatype === 'BYTES' ? '' : datatype === 'BOOL' ? false : 0;
  return new Array<TensorElement>(count).fill(zero);
}

function send(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(bytes.length), ...headers });
  res.end(bytes);
}

function xml(res: ServerResponse, status: number, body: string): void {
  const bytes = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': String(bytes.length) });
  res.end(bytes);
}

function sageMakerError(res: ServerResponse, status: number, type: string, message: string): void {
  send(res, status, { message }, { 'x-amzn-ErrorType': `${type}:http://internal.amazon.com/coral/com.amazon.sagemaker/` });
}

/** InvokeEndpoint's answer when the container failed: HTTP 424 ModelError carrying the container's own status. */
function modelError(res: ServerResponse, originalStatus: number, text: string): void {
  const originalMessage = JSON.stringify({ error: text });
  send(
    res,
    424,
    {
      ErrorCode: originalStatus >= 500 ? 'SERVER_ERROR_FROM_MODEL' : 'CLIENT_ERROR_FROM_MODEL',
      LogStreamArn: 'arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/mme',
      Message: `Received ${originalStatus >= 500 ? 'server' : 'client'} error (${originalStatus}) from primary with message ` +
        `"${originalMessage}". See the log group for more information.`,
      OriginalMessage: originalMessage,
      OriginalStatusCode: originalStatus,
    },
    { 'x-amzn-ErrorType': 'ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/' },
  );
}
