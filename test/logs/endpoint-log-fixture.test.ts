// The parser against a recorded-looking log of a three-instance endpoint (bench/endpoint-log-fixture.js): over
// 10,000 lines of pings, requests, loads, failures, evictions and a scale-in, it must find exactly the events the log
// holds, each on its instance and tied to its TargetModel and Triton model. Speed is measured by bench/logs.js.
import { generateEndpointLog, ExpectedEvent } from '../../bench/endpoint-log-fixture';
import { parseEndpointLog } from '../../lib/logs/endpoint-log-parser';
import { LogEvent } from '../../lib/logs/log-event';

function key(e: ExpectedEvent | LogEvent): string {
  const time = typeof e.time === 'number' ? e.time : e.time.getTime();
  const failure = 'failure' in e && typeof e.failure === 'object' ? e.failure?.code : (e as ExpectedEvent).failure;
  return [new Date(time).toISOString(), e.instance, e.kind, e.targetModel ?? '-', e.tritonModel ?? '-', failure ?? '-'].join(' ');
}

describe.each([
  ['JSON-escaped messages (Triton 24.06 and later)', true],
  ['raw multi-line messages (older images)', false],
])('a recorded multi-instance endpoint log, %s', (_name, escaped) => {
  const { records, expected } = generateEndpointLog({ escaped, lines: 10_000, seed: 7 });

  it('is at least 10,000 lines from three instances', () => {
    expect(records.length).toBeGreaterThanOrEqual(10_000);
    expect(new Set(records.map((r) => r.stream)).size).toBe(3);
    expect(new Set(expected.map((e) => e.kind))).toEqual(
      new Set([
        'server-started',
        'load-started',
        'load-succeeded',
        'load-failed',
        'eviction',
        'unloaded',
        'invoke-failed',
        'error',
        'server-stopping',
      ]),
    );
  });

  it('yields exactly the events it holds, each with its instance, TargetModel, Triton model and cause', () => {
    const events = parseEndpointLog(records);
    expect(events.map(key).sort()).toEqual(expected.map(key).sort());
  });

  it('reports the unknown error verbatim and joins every python traceback to its model', () => {
    const events = parseEndpointLog(records);
    const unknown = events.filter((e) => e.kind === 'error');
    expect(unknown.length).toBeGreaterThan(0);
    for (const e of unknown) expect(e.message).toBe('Failed to set config modification time: model_config_content_name_ is empty');
    const python = events.filter((e) => e.failure?.code === 'python-module-missing' || e.failure?.code === 'python-exception');
    expect(python.length).toBeGreaterThan(0);
    for (const e of python) {
      expect(e.traceback?.[0]).toMatch(/^\/opt\/ml\/models\/[0-9a-f]{32}\/model\/preprocess\/1\/model\.py\(\d+\): (<module>|execute)$/);
      expect(e.tritonModel).toBe('preprocess');
    }
    expect(events.filter((e) => e.kind === 'python-error')).toEqual([]);
  });
});
