// What servers send, printed by `list`, `invoke` and `logs` (issue 23 items 2, 3, 5): an S3 key, a tensor name, a log
// line or an error message holding DEL or a newline never breaks --json nor forges a `mme-deploy: ...` line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { InvokeEndpointCommand, SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { binaryJsonContentType } from '../../lib/kserve/kserve-codec';
import { runCli } from '../cli/run-cli';
import { useAwsProfiles } from '../aws/aws-profile-fixture';
import { FORGED } from './hostile-repositories';

useAwsProfiles(['dev']);
const s3 = mockClient(S3Client);
const runtime = mockClient(SageMakerRuntimeClient);
const logs = mockClient(CloudWatchLogsClient);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-hostile-servers-'));
  for (const mock of [s3, runtime, logs]) mock.reset();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HOSTILE_KEY = `mme/evil\x7f\n${FORGED}.tar.gz`;
const forgedLines = (text: string) => text.split('\n').filter((l) => l.startsWith(FORGED));

describe('list with a hostile S3 key', () => {
  beforeEach(() => {
    s3.on(ListObjectsV2Command).resolves({
      Contents: [{ Key: HOSTILE_KEY, Size: 10, LastModified: new Date('2026-02-03T04:05:06Z') }],
    });
  });

  it('--json parses and holds the key as it is', async () => {
    const run = await runCli(['list', '--s3', 's3://bucket/mme/', '--region', 'us-east-1', '--json']);
    expect(run.code).toBe(0);
    const parsed = JSON.parse(run.stdout);
    expect(parsed.models.map((m: { targetModel: string }) => m.targetModel)).toEqual([HOSTILE_KEY.slice('mme/'.length)]);
  });

  it('prints the key on its one line, escaped', async () => {
    const run = await runCli(['list', '--s3', 's3://bucket/mme/', '--region', 'us-east-1']);
    expect(run.code).toBe(0);
    expect(forgedLines(run.stdout + run.stderr)).toEqual([]);
    expect(run.stdout).toContain(`evil\\x7f\\n${FORGED}.tar.gz`);
  });
});

describe('invoke with hostile names in the response', () => {
  const respond = (header: object, blob = Buffer.alloc(0)) => {
    const text = JSON.stringify(header);
    runtime.on(InvokeEndpointCommand).resolves({
      Body: new Uint8Array(Buffer.concat([Buffer.from(text), blob])),
      ContentType: binaryJsonContentType(text.length),
    } as never);
  };
  const invoke = (json: boolean) => {
    writeFileSync(join(dir, 'in.json'), '[1, 2, 3]');
    const args = ['invoke', 'm.tar.gz', '--endpoint', 'mme', '--region', 'us-east-1',
      '--input', 'INPUT=@in.json', '--shape', '1,3', '--datatype', 'FP32'];
    return runCli(json ? [...args, '--json'] : args, { cwd: dir });
  };

  it('keeps a tensor name with a newline on its line, and --json valid', async () => {
    const output = { name: `OUT\x7f\n${FORGED}`, datatype: 'FP32', shape: [1], parameters: { binary_data_size: 4 } };
    respond({ model_name: `m\n${FORGED}`, outputs: [output] }, Buffer.alloc(4));
    const human = await invoke(false);
    expect(human.code).toBe(0);
    expect(forgedLines(human.stdout + human.stderr)).toEqual([]);
    expect(human.stdout).toContain(`OUT\\x7f\\n${FORGED}`);
    const json = await invoke(true);
    expect(JSON.parse(json.stdout).outputs[0].name).toBe(output.name);
  });

  it('reports an error message holding a newline on one line', async () => {
    const err = Object.assign(new Error(`model failed\n${FORGED}`), {
      name: 'ModelError',
      $metadata: { httpStatusCode: 424 },
      OriginalStatusCode: 500,
      OriginalMessage: `{"error":"bad\\n${FORGED}"}`,
    });
    runtime.on(InvokeEndpointCommand).rejects(err);
    for (const json of [false, true]) {
      const run = await invoke(json);
      expect(run.code).toBe(1);
      expect(forgedLines(run.stderr)).toEqual([]);
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      if (json) expect(() => JSON.parse(run.stdout)).not.toThrow();
    }
  });

  it('gives a one-line domain error for a response nested a million levels deep', async () => {
    const deep = `{"outputs":[{"name":"y","datatype":"FP32","shape":[1],"data":${'['.repeat(1e6)}${']'.repeat(1e6)}}]}`;
    runtime.on(InvokeEndpointCommand).resolves({ Body: new Uint8Array(Buffer.from(deep)), ContentType: 'application/json' } as never);
    const run = await invoke(false);
    expect(run.stderr).toContain("Tensor 'y' has data nested more than 64 arrays deep");
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.code).toBe(1);
  });
});

describe('logs with hostile log lines', () => {
  it('keeps a model name and a message holding a newline on their lines', async () => {
    const time = Date.now() - 60_000;
    const stamp = new Date(time).toISOString();
    const clock = `${stamp.slice(5, 7)}${stamp.slice(8, 10)} ${stamp.slice(11, 23)}000`;
    logs.on(FilterLogEventsCommand).resolves({
      events: [{
        logStreamName: 'AllTraffic/i-0a1b2c3d4e5f60001',
        timestamp: time,
        ingestionTime: time,
        eventId: '1',
        message: `E${clock} 1 model_lifecycle.cc:654] failed to load 'x\n${FORGED}' version 1: Internal: boom\n${FORGED}`,
      }],
    });
    for (const json of [false, true]) {
      const run = await runCli(['logs', '--endpoint', 'mme', '--region', 'us-east-1', '--since', '10m', ...(json ? ['--json'] : [])]);
      expect(run.code).toBe(0);
      expect(forgedLines(run.stdout + run.stderr)).toEqual([]);
      if (json) for (const line of run.stdout.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
      else expect(run.stdout).toContain(`    failed to load 'x\\n${FORGED}' version 1: Internal: boom\\n${FORGED}\n`);
    }
  });
});

describe('logs paging is bounded', () => {
  const args = ['logs', '--endpoint', 'mme', '--region', 'us-east-1', '--since', '10m'];

  it('stops after 2000 pages of a service that never stops handing out next-page tokens', async () => {
    let page = 0;
    logs.on(FilterLogEventsCommand).callsFake(() => ({ events: [], nextToken: `token-${(page += 1)}` }));
    const run = await runCli(args);
    expect(run.code).toBe(1);
    expect(page).toBe(2000);
    expect(run.stderr).toMatch(
      /^mme-deploy: CloudWatch Logs was still handing out pages of \/aws\/sagemaker\/Endpoints\/mme after 2000 pages and \d+ s; stopped\./,
    );
  });

  it('stops when the service repeats a next-page token', async () => {
    logs.on(FilterLogEventsCommand).resolves({ events: [], nextToken: 'same' });
    const run = await runCli(args);
    expect(run.code).toBe(1);
    expect(logs.commandCalls(FilterLogEventsCommand)).toHaveLength(2);
    expect(run.stderr).toContain('answered a next-page token it had already given');
  });
});
