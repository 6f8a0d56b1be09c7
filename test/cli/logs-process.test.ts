// Slow: ~10 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// `mme-deploy logs` as a user runs it: a real process, the real AWS SDK (its retries with backoff included), and a
// local stand-in for CloudWatch Logs and SageMaker on 127.0.0.1 (JSON protocol, routed on X-Amz-Target), reached
// through AWS_ENDPOINT_URL_CLOUDWATCH_LOGS / AWS_ENDPOINT_URL_SAGEMAKER. Stopping a follow with SIGTERM or Ctrl-C
// (SIGINT) or SIGHUP (a closed terminal) is tested on that process.
import { createServer, Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCli, until } from './cli-process';
import { loadScaled } from '../load-scale';

interface Request {
  readonly target: string;
  readonly body: Record<string, unknown>;
}
type Reply = { status: number; body: unknown };

let server: Server;
let port: number;
let requests: Request[];
let reply: (request: Request, n: number) => Reply;
let home: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (chunk) => (data += chunk));
    req.on('end', () => {
      const request = { target: String(req.headers['x-amz-target']), body: JSON.parse(data || '{}') as Record<string, unknown> };
      requests.push(request);
      const r = reply(request, requests.length);
      res.writeHead(r.status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  home = mkdtempSync(join(tmpdir(), 'logs-home-'));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(home, { recursive: true, force: true });
});
beforeEach(() => {
  requests = [];
});

function cli(args: string[]) {
  return spawnCli(args, {
    env: {
      HOME: home,
      AWS_ACCESS_KEY_ID: 'test-access-key',
      AWS_SECRET_ACCESS_KEY: 'test-secret-key',
      AWS_REGION: 'eu-west-1',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: `http://127.0.0.1:${port}`,
      AWS_ENDPOINT_URL_SAGEMAKER: `http://127.0.0.1:${port}`,
    },
  });
}

const STREAM = 'AllTraffic/i-0a1b2c3d4e5f60001';
function events(now: number): Reply {
  const message = (text: string, offset: number) => ({
    logStreamName: STREAM,
    timestamp: now - offset,
    ingestionTime: now,
    message: text,
    eventId: `e${offset}`,
  });
  return {
    status: 200,
    body: {
      events: [
        message('I1130 14:05:01.000000 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: yolo.tar.gz"', 2000),
        message(
          "E1130 14:05:04.600000 1 model_lifecycle.cc:654] \"failed to load '/opt/ml/models/abc::yolo.tar.gz' version 1: " +
            'Internal: unable to create TensorRT engine: 6: The engine plan file is generated on an incompatible device, ' +
            'expecting compute 7.5 got compute 8.9, please rebuild."',
          1000,
        ),
      ],
      searchedLogStreams: [],
    },
  };
}

describe('mme-deploy logs against a local CloudWatch Logs', () => {
  it('retries FilterLogEvents while throttled, then prints the events', async () => {
    reply = (_request, n) =>
      n <= 2 ? { status: 400, body: { __type: 'ThrottlingException', message: 'Rate exceeded' } } : events(Date.now());
    const run = cli(['logs', '--endpoint', 'mme', '--since', '10m']);
    expect(await run.exit).toBe(0);
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.target).toBe('Logs_20140328.FilterLogEvents');
      expect(Object.keys(r.body).sort()).toEqual(['endTime', 'logGroupName', 'startTime']);
      expect(r.body.logGroupName).toBe('/aws/sagemaker/Endpoints/mme');
      expect((r.body.endTime as number) - (r.body.startTime as number)).toBe(600_000);
    }
    expect(run.out()).toMatch(/ i-0a1b2c3d4e5f60001  yolo\.tar\.gz  LOAD FAILED\n/);
    expect(run.out()).toContain("fix: Build the plan on the endpoint's GPU type (compute 7.5)");
    // No REQUEST FAILED event was shown: one line says they are logged only with verbose logging on.
    expect(run.err()).toMatch(/^note: failed requests \(REQUEST FAILED\) are in the log only with verbose logging on[^\n]*\n$/);
  });

  it('explains a missing log group and exits 1, without a stack trace', async () => {
    reply = (request) =>
      request.target === 'SageMaker.DescribeEndpoint'
        ? { status: 400, body: { __type: 'ValidationException', message: 'Could not find endpoint "nope".' } }
        : { status: 400, body: { __type: 'ResourceNotFoundException', message: 'The specified log group does not exist.' } };
    const run = cli(['logs', '--endpoint', 'nope']);
    expect(await run.exit).toBe(1);
    expect(requests.map((r) => r.target)).toEqual(['Logs_20140328.FilterLogEvents', 'SageMaker.DescribeEndpoint']);
    expect(run.err()).toBe(
      "mme-deploy: Endpoint 'nope' does not exist in eu-west-1, so it has no log group. " +
        'Check the name and --region (aws sagemaker list-endpoints).\n',
    );
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`stops --follow cleanly on ${signal}, exiting 130`, async () => {
      reply = (_request, n) => (n === 1 ? events(Date.now()) : { status: 200, body: { events: [] } });
      const run = cli(['logs', '--endpoint', 'mme', '--follow', '--poll-interval', '1', '--json']);
      await until(() => run.out().includes('"kind":"load-failed"'), 'the first events');
      await until(() => requests.length >= 2, 'a second read');
      const stoppedAt = Date.now();
      run.kill(signal);
      expect(await run.exit).toBe(130);
      // Promptly: well within the next 1 s poll plus a start-up, on a quiet machine; a hang never exits at all.
      expect(Date.now() - stoppedAt).toBeLessThan(loadScaled(3000));
      const objects = run.out().trimEnd().split('\n').map((l) => JSON.parse(l) as { kind: string });
      expect(objects.map((o) => o.kind)).toEqual(['load-started', 'load-failed']);
      expect(run.err()).toBe('');
    });
  }
});
