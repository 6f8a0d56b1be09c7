// The exact CloudWatch Logs calls behind `logs` and the failures of `status`, with aws-sdk-client-mock standing in
// for the services (the SDK's own retries are exercised against a local stand-in in test/cli/logs-process.test.ts).
import { CloudWatchLogsClient, FilteredLogEvent, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeEndpointCommand, DescribeEndpointConfigCommand, DescribeModelCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { ApplicationAutoScalingClient, DescribeScalableTargetsCommand } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { captureIo } from '../cli/run-cli';
import { runLogs } from '../../lib/cli/logs';
import { runStatus } from '../../lib/cli/status';
import { followEndpointLogEvents } from '../../lib/aws/endpoint-logs';
import { FAILURE_FILTER_PATTERN } from '../../lib/logs/log-messages';
import { isMmeError } from '../../lib/errors';
import { exitCodeOf } from '../../lib/cli/exit-codes';
import { useAwsProfiles } from './aws-profile-fixture';

useAwsProfiles(['dev']);

const logs = mockClient(CloudWatchLogsClient);
const sageMaker = mockClient(SageMakerClient);
const autoScaling = mockClient(ApplicationAutoScalingClient);
const cloudWatch = mockClient(CloudWatchClient);

beforeEach(() => {
  for (const mock of [logs, sageMaker, autoScaling, cloudWatch]) mock.reset();
});

function awsError(name: string, status: number, message = name): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
}

const NOW = new Date('2026-11-30T15:00:00Z');
const HOUR_AGO = NOW.getTime() - 3600_000;
const STREAM = 'AllTraffic/i-0a1b2c3d4e5f60001';
const H = '9c4e7d2b1a0f6e5d4c3b2a1908f7e6d5';
let nextId = 0;

/** A FilteredLogEvent as CloudWatch Logs returns it, for a line Triton wrote at `time`. */
function line(time: string, message: string, stream = STREAM): FilteredLogEvent {
  const timestamp = Date.parse(time);
  return { logStreamName: stream, timestamp, ingestionTime: timestamp + 800, message, eventId: `3${String(nextId++).padStart(55, '0')}` };
}

const LOAD_REQUEST = [
  line(
    '2026-11-30T14:05:01.000Z',
    'I1130 14:05:01.000000 1 sagemaker_server.cc:360] Loading SageMaker TargetModel: model_trt_python.tar.gz',
  ),
  line('2026-11-30T14:05:01.010Z', `I1130 14:05:01.010000 1 model_lifecycle.cc:473] loading: /opt/ml/models/${H}/model::preprocess:1`),
  line(
    '2026-11-30T14:05:04.200Z',
    "I1130 14:05:04.200000 311 pb_stub.cc:389]  Failed to initialize Python stub: ModuleNotFoundError: No module named 'transformers'",
  ),
  line('2026-11-30T14:05:04.200Z', 'At:'),
  line('2026-11-30T14:05:04.200Z', `  /opt/ml/models/${H}/model/preprocess/1/model.py(6): <module>`),
];
const LOAD_FAILURE = [
  line(
    '2026-11-30T14:05:04.600Z',
    `E1130 14:05:04.600000 1 model_lifecycle.cc:654] failed to load '/opt/ml/models/${H}/model::preprocess' version 1: ` +
      `Internal: ModuleNotFoundError: No module named 'transformers'`,
  ),
  line('2026-11-30T14:05:04.600Z', 'At:'),
  line('2026-11-30T14:05:04.600Z', `  /opt/ml/models/${H}/model/preprocess/1/model.py(6): <module>`),
  line(
    '2026-11-30T14:05:05.000Z',
    'I1130 14:05:05.000000 1 sagemaker_server.cc:291] Started Sagemaker HTTPService at 0.0.0.0:8080',
    'AllTraffic/i-0a1b2c3d4e5f60002',
  ),
];

describe('logs: reading the endpoint log group', () => {
  it('pages through FilterLogEvents over the window and joins a failure split across pages', async () => {
    logs
      .on(FilterLogEventsCommand)
      .resolvesOnce({ events: LOAD_REQUEST, nextToken: 'page-2' })
      .resolvesOnce({ events: [], nextToken: 'page-3' })
      .resolvesOnce({ events: LOAD_FAILURE });
    const io = captureIo();
    expect(await runLogs({ endpoint: 'mme', now: NOW }, io)).toBe(0);
    const base = { logGroupName: '/aws/sagemaker/Endpoints/mme', startTime: HOUR_AGO, endTime: NOW.getTime() };
    expect(logs.commandCalls(FilterLogEventsCommand).map((c) => c.args[0].input)).toEqual([
      base,
      { ...base, nextToken: 'page-2' },
      { ...base, nextToken: 'page-3' },
    ]);
    expect(io.out()).toBe(
      [
        '2026-11-30 14:05:01  i-0a1b2c3d4e5f60001  model_trt_python.tar.gz  loading',
        '2026-11-30 14:05:01  i-0a1b2c3d4e5f60001  model_trt_python.tar.gz › preprocess  loading',
        '2026-11-30 14:05:04  i-0a1b2c3d4e5f60001  model_trt_python.tar.gz › preprocess  LOAD FAILED',
        "    Internal: ModuleNotFoundError: No module named 'transformers'",
        `    at /opt/ml/models/${H}/model/preprocess/1/model.py(6): <module>`,
        "    cause: The python model imports 'transformers', which is not installed in the environment it runs in.",
        "    fix: Add transformers to the model's conda-pack environment (EXECUTION_ENV_PATH) or to the image.",
        '2026-11-30 14:05:05  i-0a1b2c3d4e5f60002  server started',
        '    Started Sagemaker HTTPService at 0.0.0.0:8080',
        '',
      ].join('\n'),
    );
  });

  it('prints one JSON object per event with --json', async () => {
    logs.on(FilterLogEventsCommand).resolves({ events: [...LOAD_REQUEST, ...LOAD_FAILURE] });
    const io = captureIo();
    expect(await runLogs({ endpoint: 'mme', now: NOW, json: true }, io)).toBe(0);
    const objects = io.out().trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(objects.map((o) => o.kind)).toEqual(['load-started', 'load-started', 'load-failed', 'server-started']);
    expect(objects[2]).toMatchObject({
      time: '2026-11-30T14:05:04.200Z', // the stub's line, the event's first
      instance: 'i-0a1b2c3d4e5f60001',
      stream: STREAM,
      targetModel: 'model_trt_python.tar.gz',
      tritonModel: 'preprocess',
      version: 1,
      hash: H,
      failure: { code: 'python-module-missing' },
      traceback: [`/opt/ml/models/${H}/model/preprocess/1/model.py(6): <module>`],
    });
  });

  it('reads one variant\'s streams from --since, and keeps one TargetModel\'s events', async () => {
    logs.on(FilterLogEventsCommand).resolves({ events: [...LOAD_REQUEST, ...LOAD_FAILURE] });
    const io = captureIo();
    expect(
      await runLogs(
        {
          endpoint: 'mme',
          now: NOW,
          since: '2026-11-30T14:00:00Z',
          variant: 'AllTraffic',
          targetModel: 'model_trt_python.tar.gz',
          json: true,
        },
        io,
      ),
    ).toBe(0);
    expect(logs.commandCalls(FilterLogEventsCommand)[0]!.args[0].input).toEqual({
      logGroupName: '/aws/sagemaker/Endpoints/mme',
      startTime: Date.parse('2026-11-30T14:00:00Z'),
      endTime: NOW.getTime(),
      logStreamNamePrefix: 'AllTraffic/',
    });
    expect(io.out().trimEnd().split('\n').map((l) => JSON.parse(l).kind)).toEqual(['load-started', 'load-started', 'load-failed']);
  });

  it('says so on stderr when the window has no event', async () => {
    logs
      .on(FilterLogEventsCommand)
      .resolves({
        events: [line('2026-11-30T14:30:00Z', 'I1130 14:30:00.000000 1 sagemaker_server.cc:154] "SageMaker request: 0 /ping"')],
      });
    const io = captureIo();
    expect(await runLogs({ endpoint: 'mme', now: NOW, since: '30m' }, io)).toBe(0);
    expect(io.out()).toBe('');
    expect(io.err()).toBe(
      'note: no events in /aws/sagemaker/Endpoints/mme since 2026-11-30 14:30:00 UTC.\n' +
        'note: failed requests (REQUEST FAILED) are in the log only with verbose logging on, the default; ' +
        "SAGEMAKER_TRITON_LOG_VERBOSE=0 (the construct's environment.logVerbose: 0) leaves them out. " +
        'Invoke always gets its own failure in its answer.\n',
    );
  });

  it('leaves the verbose-logging note out when failed requests are in the log, with their cause from the one table', async () => {
    logs.on(FilterLogEventsCommand).resolves({
      events: [
        line('2026-11-30T14:40:00Z', 'I1130 14:40:00.000000 1 sagemaker_server.cc:230] Invoking SageMaker TargetModel: a.tar.gz'),
        line('2026-11-30T14:40:00.100Z', 'I1130 14:40:00.100000 1 sagemaker_server.cc:606] Infer failed: Stub process is not healthy.'),
      ],
    });
    const io = captureIo();
    expect(await runLogs({ endpoint: 'mme', now: NOW, since: '30m' }, io)).toBe(0);
    expect(io.out()).toContain('REQUEST FAILED');
    expect(io.out()).toContain("The python backend's stub process exited.");
    expect(io.err()).toBe('');
  });

  it('refuses a --since it cannot read, before calling AWS', async () => {
    await expect(runLogs({ endpoint: 'mme', since: 'yesterday' }, captureIo())).rejects.toThrow(
      "--since 'yesterday' is neither a duration (30s, 15m, 1h, 2d, 1w) nor an ISO 8601 time (2026-11-30T14:00:00Z).",
    );
    await expect(runLogs({ since: '1h' }, captureIo())).rejects.toThrow('Which endpoint? Give --endpoint NAME.');
    expect(logs.calls()).toHaveLength(0);
  });
});

describe('logs: errors', () => {
  const run = (region = 'eu-west-1') => runLogs({ endpoint: 'mme', now: NOW, region }, captureIo());

  it('explains a missing log group of an endpoint that exists but has not written yet', async () => {
    logs.on(FilterLogEventsCommand).rejects(awsError('ResourceNotFoundException', 400, 'The specified log group does not exist.'));
    sageMaker.on(DescribeEndpointCommand, { EndpointName: 'mme' }).resolves({ EndpointName: 'mme', EndpointStatus: 'Creating' });
    const err = await run().catch((e: unknown) => e);
    expect(isMmeError(err, 'LOG_GROUP_NOT_FOUND')).toBe(true);
    expect((err as Error).message).toBe(
      'Log group /aws/sagemaker/Endpoints/mme does not exist in eu-west-1. ' +
        "Endpoint 'mme' exists (Creating) but none of its instances has written a line yet, or the log group was deleted: " +
        'wait for its first instance to start.',
    );
    expect(exitCodeOf('LOG_GROUP_NOT_FOUND')).toBe(1);
  });

  it('says when the endpoint itself does not exist in the region', async () => {
    logs.on(FilterLogEventsCommand).rejects(awsError('ResourceNotFoundException', 400, 'The specified log group does not exist.'));
    sageMaker.on(DescribeEndpointCommand).rejects(awsError('ValidationException', 400, 'Could not find endpoint "mme".'));
    await expect(run()).rejects.toThrow(
      "Endpoint 'mme' does not exist in eu-west-1, so it has no log group. Check the name and --region (aws sagemaker list-endpoints).",
    );
  });

  it('still names the log group, region and permission when the endpoint cannot be checked', async () => {
    logs.on(FilterLogEventsCommand).rejects(awsError('ResourceNotFoundException', 400, 'The specified log group does not exist.'));
    sageMaker.on(DescribeEndpointCommand).rejects(awsError('AccessDeniedException', 400, 'not authorized'));
    await expect(run()).rejects.toThrow(
      'Log group /aws/sagemaker/Endpoints/mme does not exist in eu-west-1. ' +
        'Check the endpoint name and --region (whether the endpoint exists could not be checked: AccessDeniedException; ' +
        'it needs sagemaker:DescribeEndpoint).',
    );
  });

  it('names the missing permission', async () => {
    logs.on(FilterLogEventsCommand).rejects(
      awsError('AccessDeniedException', 400, 'User: arn:aws:iam::123456789012:user/dev is not authorized to perform: logs:FilterLogEvents'),
    );
    const err = await runLogs({ endpoint: 'mme', now: NOW, region: 'eu-west-1', profile: 'dev' }, captureIo()).catch((e: unknown) => e);
    expect(isMmeError(err, 'AWS_ACCESS_DENIED')).toBe(true);
    expect((err as Error).message).toBe(
      "Access denied: the credentials of profile 'dev' may not logs:FilterLogEvents on log " +
        'group /aws/sagemaker/Endpoints/mme in eu-west-1. Grant logs:FilterLogEvents on ' +
        'arn:aws:logs:eu-west-1:<account>:log-group:/aws/sagemaker/Endpoints/mme:* (docs/live-endpoint.md ' +
        'lists what `logs` needs).',
    );
  });

  it('reports throttling that outlasted the SDK\'s retries with a code of its own', async () => {
    logs.on(FilterLogEventsCommand).rejects(awsError('ThrottlingException', 400, 'Rate exceeded'));
    const err = await run().catch((e: unknown) => e);
    expect(isMmeError(err, 'AWS_THROTTLED')).toBe(true);
    expect((err as Error).message).toContain(
      'CloudWatch Logs kept throttling logs:FilterLogEvents (ThrottlingException) after retries with backoff',
    );
  });
});

describe('logs --follow (library)', () => {
  it('reads new lines from where it was, skips lines it has seen, backs off while throttled and ends on abort', async () => {
    const abort = new AbortController();
    // Lines written just now: the stub's error waits (30 s at most) for the core's failure in the next read.
    const shift = Date.now() - Date.parse('2026-11-30T14:05:05Z');
    const recent = (events: FilteredLogEvent[]) => events.map((e) => ({ ...e, timestamp: e.timestamp! + shift }));
    const first = recent(LOAD_REQUEST);
    const later = recent(LOAD_FAILURE);
    logs
      .on(FilterLogEventsCommand)
      .resolvesOnce({ events: first })
      .rejectsOnce(awsError('ThrottlingException', 400, 'Rate exceeded'))
      .callsFakeOnce(async () => ({ events: [...first.slice(-2), ...later] })) // overlaps the first read
      .callsFake(async () => {
        abort.abort();
        return { events: [] };
      });
    const throttled: number[] = [];
    const batches: string[][] = [];
    const start = new Date(HOUR_AGO + shift);
    for await (const batch of followEndpointLogEvents(
      new CloudWatchLogsClient({}),
      { endpointName: 'mme', start },
      { signal: abort.signal, pollIntervalMs: 5, onThrottled: (ms) => throttled.push(ms) },
    )) {
      batches.push(batch.map((e) => `${e.kind} ${e.tritonModel ?? ''}`.trim()));
    }
    const inputs = logs.commandCalls(FilterLogEventsCommand).map((c) => c.args[0].input);
    expect(inputs[0]).toEqual({ logGroupName: '/aws/sagemaker/Endpoints/mme', startTime: start.getTime() });
    // Later reads start 30 s before the newest line seen, so lines CloudWatch ingests late are not missed.
    expect(inputs[2]).toEqual({
      logGroupName: '/aws/sagemaker/Endpoints/mme',
      startTime: Date.parse('2026-11-30T14:05:04.200Z') + shift - 30_000,
    });
    expect(throttled).toEqual([10]);
    expect(batches).toEqual([
      ['load-started model_trt_python.tar.gz', 'load-started preprocess'],
      ['load-failed preprocess', 'server-started'],
    ]);
  });
});

describe('status: failures of the last hour', () => {
  function mockEndpoint(): void {
    sageMaker
      .on(DescribeEndpointCommand)
      .resolves({
        EndpointName: 'mme',
        EndpointConfigName: 'cfg',
        EndpointStatus: 'InService',
        ProductionVariants: [{ VariantName: 'AllTraffic', CurrentInstanceCount: 2 }],
      });
    sageMaker
      .on(DescribeEndpointConfigCommand)
      .resolves({ ProductionVariants: [{ VariantName: 'AllTraffic', ModelName: 'm', InstanceType: 'ml.g4dn.xlarge' }] });
    sageMaker.on(DescribeModelCommand).resolves({ PrimaryContainer: { Mode: 'MultiModel', ModelDataUrl: 's3://model-bucket/mme/' } });
    autoScaling.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [] });
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
  }

  it('reads only the failure lines of the variant\'s streams and shows the latest failure per TargetModel with its fix', async () => {
    mockEndpoint();
    logs.on(FilterLogEventsCommand).resolves({ events: [...LOAD_REQUEST, ...LOAD_FAILURE] });
    const io = captureIo();
    expect(await runStatus({ endpoint: 'mme', now: new Date('2026-11-30T15:00:30Z') }, io)).toBe(0);
    expect(logs.commandCalls(FilterLogEventsCommand)[0]!.args[0].input).toEqual({
      logGroupName: '/aws/sagemaker/Endpoints/mme',
      startTime: HOUR_AGO,
      endTime: NOW.getTime(),
      logStreamNamePrefix: 'AllTraffic/',
      filterPattern: FAILURE_FILTER_PATTERN,
    });
    expect(FAILURE_FILTER_PATTERN).toMatch(/^\?"Loading SageMaker TargetModel" \?"Received model_name" .* \?"failed to load" /);
    expect(io.out()).toContain(
      [
        'Failures in the last hour, per TargetModel (container logs; details: mme-deploy logs --endpoint mme)',
        'model_trt_python.tar.gz  1 failure on i-0a1b2c3d4e5f60001, last 14:05 load failed',
        "    preprocess: The python model imports 'transformers', which is not installed in the environment it runs in.",
        "    fix: Add transformers to the model's conda-pack environment (EXECUTION_ENV_PATH) or to the image.",
      ].join('\n'),
    );
  });

  it('still reports the endpoint when the log group is missing, with a note', async () => {
    mockEndpoint();
    logs.on(FilterLogEventsCommand).rejects(awsError('ResourceNotFoundException', 400, 'The specified log group does not exist.'));
    const io = captureIo();
    expect(await runStatus({ endpoint: 'mme', now: NOW, region: 'us-east-1' }, io)).toBe(0);
    expect(io.out()).toContain('Endpoint      mme  InService');
    expect(io.out()).not.toContain('Failures in the last hour');
    expect(io.err()).toContain(
      "note: Failures not shown: Log group /aws/sagemaker/Endpoints/mme does not exist in us-east-1. Endpoint 'mme' exists (InService)",
    );
  });
});
