// Slow: ~5 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// `mme-deploy logs` as a user runs it: a real process, the real AWS SDK (its retries with backoff included), and a
// local stand-in for CloudWatch Logs and SageMaker on 127.0.0.1 (JSON protocol, routed on X-Amz-Target), reached
// through AWS_ENDPOINT_URL_CLOUDWATCH_LOGS / AWS_ENDPOINT_URL_SAGEMAKER. Stopping a follow with SIGTERM or Ctrl-C
// (SIGINT) or SIGHUP (a closed terminal) is tested on that process.
// The four processes run at once, each against an endpoint of its own: each spends most of its time waiting on the
// SDK's backoff or on its poll interval, so together they take the time of the longest one. Each test reads its own.
// The two reads that end by themselves (throttled, missing log group) share one process, one after the other
// (test/cli/main-runner.cjs: the CLI's main as the bundled entry calls it, the same SDK and stand-in): one node start
// and one load of the SDK fewer, and their exit codes and bytes on stdout and stderr are still the CLI's own. The
// follows each have a process of their own: what they test is the signal that stops it.
import { createServer, Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMainInProcess, spawnCli, until } from './cli-process';
import { loadScaled } from '../load-scale';

interface Request {
  readonly target: string;
  readonly body: Record<string, unknown>;
}
type Reply = { status: number; body: unknown };

/** One endpoint's side of the stand-in: the requests naming it, and how they are answered. */
interface Site {
  readonly requests: Request[];
  readonly reply: (request: Request, n: number) => Reply;
}

let server: Server;
let port: number;
let home: string;
const sites = new Map<string, Site>();

/** The endpoint a request is about: DescribeEndpoint names it, FilterLogEvents names its log group. */
function endpointOf(body: Record<string, unknown>): string {
  return String(body.EndpointName ?? String(body.logGroupName ?? '').replace(/^\/aws\/sagemaker\/Endpoints\//, ''));
}

function site(endpoint: string, reply: Site['reply']): Site {
  const created: Site = { requests: [], reply };
  sites.set(endpoint, created);
  return created;
}

/** The environment of a CLI process: the stand-in for both services, test credentials, no instance metadata. */
const cliEnv = () => ({
  HOME: home,
  AWS_ACCESS_KEY_ID: 'test-access-key',
  AWS_SECRET_ACCESS_KEY: 'test-secret-key',
  AWS_REGION: 'eu-west-1',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: `http://127.0.0.1:${port}`,
  AWS_ENDPOINT_URL_SAGEMAKER: `http://127.0.0.1:${port}`,
});

function cli(args: string[]) {
  return spawnCli(args, { env: cliEnv() });
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

type Run = ReturnType<typeof cli>;
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Runs `logs` with `args` to its end; the process is killed if the scenario fails half-way. */
async function scenario<T>(args: string[], drive: (run: Run) => Promise<T>): Promise<T & { run: Run; code: number }> {
  const run = cli(args);
  try {
    const driven = await drive(run);
    return { ...driven, run, code: await run.exit };
  } catch (err) {
    run.kill('SIGKILL');
    throw err;
  }
}

/** The reads that end by themselves, in one process: [throttled, then answered; a missing log group]. */
const reads = async () => {
  site('mme', (_request, n) =>
    n <= 2 ? { status: 400, body: { __type: 'ThrottlingException', message: 'Rate exceeded' } } : events(Date.now()));
  site('nope', (request) =>
    request.target === 'SageMaker.DescribeEndpoint'
      ? { status: 400, body: { __type: 'ValidationException', message: 'Could not find endpoint "nope".' } }
      : { status: 400, body: { __type: 'ResourceNotFoundException', message: 'The specified log group does not exist.' } });
  const [throttled, missingGroup] = await runMainInProcess(
    [['logs', '--endpoint', 'mme', '--since', '10m'], ['logs', '--endpoint', 'nope']],
    { env: cliEnv() },
  );
  return { throttled: throttled!, missingGroup: missingGroup! };
};

const followStopped = (signal: (typeof SIGNALS)[number]) => {
  const endpoint = `follow-${signal.toLowerCase()}`;
  const own = site(endpoint, (_request, n) => (n === 1 ? events(Date.now()) : { status: 200, body: { events: [] } }));
  return scenario(['logs', '--endpoint', endpoint, '--follow', '--poll-interval', '1', '--json'], async (run) => {
    await until(() => run.out().includes('"kind":"load-failed"'), 'the first events', 20, run);
    await until(() => own.requests.length >= 2, 'a second read', 20, run);
    const stoppedAt = Date.now();
    run.kill(signal);
    await run.exit;
    return { stoppedMs: Date.now() - stoppedAt };
  });
};

/** The scenarios, started together in beforeAll; a rejection is reported by the test that awaits it. */
let runs: {
  reads: ReturnType<typeof reads>;
  follow: Record<(typeof SIGNALS)[number], ReturnType<typeof followStopped>>;
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (chunk) => (data += chunk));
    req.on('end', () => {
      const request = { target: String(req.headers['x-amz-target']), body: JSON.parse(data || '{}') as Record<string, unknown> };
      const own = sites.get(endpointOf(request.body));
      if (!own) {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
        return void res.end(JSON.stringify({ __type: 'ValidationException', message: 'stand-in: no such endpoint' }));
      }
      own.requests.push(request);
      const r = own.reply(request, own.requests.length);
      res.writeHead(r.status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  home = mkdtempSync(join(tmpdir(), 'logs-home-'));
  const handled = <T>(promise: Promise<T>) => {
    promise.catch(() => undefined);
    return promise;
  };
  runs = {
    reads: handled(reads()),
    follow: {
      SIGTERM: handled(followStopped('SIGTERM')),
      SIGINT: handled(followStopped('SIGINT')),
      SIGHUP: handled(followStopped('SIGHUP')),
    },
  };
});
afterAll(async () => {
  // Every run has ended (or been killed) by the time its test finished; wait for any a failed beforeAll left.
  await Promise.allSettled([runs?.reads, ...Object.values(runs?.follow ?? {})]);
  await new Promise((resolve) => server.close(resolve));
  rmSync(home, { recursive: true, force: true });
});

describe('mme-deploy logs against a local CloudWatch Logs', () => {
  it('retries FilterLogEvents while throttled, then prints the events', async () => {
    const { code, stdout, stderr } = (await runs.reads).throttled;
    const { requests } = sites.get('mme')!;
    expect(code).toBe(0);
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.target).toBe('Logs_20140328.FilterLogEvents');
      expect(Object.keys(r.body).sort()).toEqual(['endTime', 'logGroupName', 'startTime']);
      expect(r.body.logGroupName).toBe('/aws/sagemaker/Endpoints/mme');
      expect((r.body.endTime as number) - (r.body.startTime as number)).toBe(600_000);
    }
    expect(stdout).toMatch(/ i-0a1b2c3d4e5f60001  yolo\.tar\.gz  LOAD FAILED\n/);
    expect(stdout).toContain("fix: Build the plan on the endpoint's GPU type (compute 7.5)");
    // No REQUEST FAILED event was shown: one line says they are logged only with verbose logging on.
    expect(stderr).toMatch(/^note: failed requests \(REQUEST FAILED\) are in the log only with verbose logging on[^\n]*\n$/);
  });

  it('explains a missing log group and exits 1, without a stack trace', async () => {
    const { code, stderr } = (await runs.reads).missingGroup;
    expect(code).toBe(1);
    expect(sites.get('nope')!.requests.map((r) => r.target)).toEqual(['Logs_20140328.FilterLogEvents', 'SageMaker.DescribeEndpoint']);
    expect(stderr).toBe(
      "mme-deploy: Endpoint 'nope' does not exist in eu-west-1, so it has no log group. " +
        'Check the name and --region (aws sagemaker list-endpoints).\n',
    );
  });

  for (const signal of SIGNALS) {
    it(`stops --follow cleanly on ${signal}, exiting 130`, async () => {
      const { run, code, stoppedMs } = await runs.follow[signal];
      expect(code).toBe(130);
      // Promptly: well within the next 1 s poll plus a start-up, on a quiet machine; a hang never exits at all.
      expect(stoppedMs).toBeLessThan(loadScaled(3000));
      const objects = run.out().trimEnd().split('\n').map((l) => JSON.parse(l) as { kind: string });
      expect(objects.map((o) => o.kind)).toEqual(['load-started', 'load-failed']);
      expect(run.err()).toBe('');
    });
  }
});
