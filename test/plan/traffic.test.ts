import { seededRandom } from '../../lib/plan/seeded-random';
import {
  buildAliasTable,
  parseTrafficCsv,
  parseTrafficKeyword,
  sampleAlias,
  sampleTrace,
  traceRequests,
  trafficWeights,
} from '../../lib/plan/traffic';

describe('seeded random numbers', () => {
  it('repeats the same sequence for the same seed and differs between seeds', () => {
    const take = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 5 }, () => random());
    };
    expect(take(3)).toEqual(take(3));
    expect(take(3)).not.toEqual(take(4));
    expect(take(1)).not.toEqual(take(1 + 2 ** 32));
  });

  it('draws numbers in [0, 1) with a mean near 1/2', () => {
    const random = seededRandom(9);
    let sum = 0;
    // One aggregated assertion: 100,000 expect calls cost seconds, the same check as counts costs milliseconds.
    const outOfRange: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      const x = random();
      if (!(x >= 0 && x < 1)) outOfRange.push(x);
      sum += x;
    }
    expect(outOfRange).toEqual([]);
    expect(Math.abs(sum / 100_000 - 0.5)).toBeLessThan(0.005);
  });
});

describe('alias sampling', () => {
  it('draws each index in proportion to its weight (±1 % of the draws)', () => {
    const weights = [5, 0, 1, 3, 1];
    const table = buildAliasTable(weights);
    const random = seededRandom(11);
    const counts = new Array(weights.length).fill(0);
    const draws = 200_000;
    for (let i = 0; i < draws; i++) counts[sampleAlias(table, random)]++;
    weights.forEach((w, i) => expect(Math.abs(counts[i] / draws - w / 10)).toBeLessThan(0.01));
    expect(counts[1]).toBe(0);
  });

  it('refuses weights that sum to zero', () => {
    expect(() => buildAliasTable([0, 0])).toThrow(RangeError);
  });

  it('spaces Poisson arrivals at the requested rate', () => {
    const trace = sampleTrace([1, 1], { count: 100_000, rps: 50, random: seededRandom(5) });
    const rate = (trace.models.length - 1) / trace.times[trace.times.length - 1]!;
    expect(Math.abs(rate - 50)).toBeLessThan(1);
  });
});

describe('traffic specs', () => {
  it('reads uniform and zipf:S, with zipf meaning exponent 1', () => {
    expect(parseTrafficKeyword('uniform')).toEqual({ kind: 'uniform' });
    expect(parseTrafficKeyword('zipf:1.2')).toEqual({ kind: 'zipf', exponent: 1.2 });
    expect(parseTrafficKeyword('zipf')).toEqual({ kind: 'zipf', exponent: 1 });
    expect(parseTrafficKeyword('zipf:-1')).toHaveProperty('error');
    expect(parseTrafficKeyword('traffic.csv')).toBeUndefined();
  });

  it('weights zipf traffic by rank in the order the models were given', () => {
    const { weights } = trafficWeights({ kind: 'zipf', exponent: 2 }, ['a', 'b', 'c']);
    expect(Array.from(weights)).toEqual([1, 1 / 4, 1 / 9]);
  });

  it('reads a model,weight CSV and warns about models it leaves out', () => {
    const parsed = parseTrafficCsv('# share of traffic\nmodel,weight\na.tar.gz,3\nb.tar.gz, 1\n', 'w.csv');
    expect(parsed.diagnostics).toEqual([]);
    const { weights, diagnostics } = trafficWeights(parsed.spec as never, ['a.tar.gz', 'b.tar.gz', 'c.tar.gz']);
    expect(Array.from(weights)).toEqual([3, 1, 0]);
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'traffic-missing-model' })]);
    expect(diagnostics[0]!.message).toContain('c.tar.gz');
  });

  it('rejects a weights file that names a model not in the plan', () => {
    const parsed = parseTrafficCsv('model,weight\nmodle.tar.gz,1\n', 'w.csv');
    const { diagnostics } = trafficWeights(parsed.spec as never, ['model.tar.gz']);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toEqual([expect.objectContaining({ code: 'traffic-unknown-model' })]);
    expect(errors[0]!.message).toContain('modle.tar.gz');
  });

  it('reads a timestamp,model trace in seconds or ISO 8601, sorted and relative to its first request', () => {
    const seconds = parseTrafficCsv('timestamp,model\n105,b\n100,a\n', 't.csv');
    expect(seconds.spec).toEqual({
      kind: 'trace',
      file: 't.csv',
      requests: [
        { time: 0, model: 'a' },
        { time: 5, model: 'b' },
      ],
    });
    const iso = parseTrafficCsv('timestamp,model\n2026-01-01T00:00:00Z,a\n2026-01-01T00:01:00Z,a\n', 't.csv');
    expect(iso.spec).toMatchObject({ requests: [{ time: 0 }, { time: 60 }] });
    const mapped = traceRequests(seconds.spec as never, ['a', 'b']);
    expect(Array.from(mapped.trace!.models)).toEqual([0, 1]);
  });

  it('explains a CSV without a known header, and bad rows by line', () => {
    expect(parseTrafficCsv('name,count\na,1\n', 'x.csv').diagnostics[0]).toMatchObject({ code: 'traffic-csv', line: 1 });
    const bad = parseTrafficCsv('model,weight\na,lots\nb\n', 'x.csv');
    expect(bad.spec).toBeUndefined();
    expect(bad.diagnostics.map((d) => d.line)).toEqual([2, 3]);
    expect(bad.diagnostics[0]).toMatchObject({ column: 1, excerpt: 'a,lots\n^' });
    // CRLF rows: the excerpt is still the row the fault is on.
    const crlf = parseTrafficCsv('# trace\r\ntimestamp,model\r\nsoon,a\r\n', 'x.csv');
    expect(crlf.diagnostics[0]).toMatchObject({ line: 3, column: 1, excerpt: 'soon,a\n^' });
    expect(parseTrafficCsv('model,weight\na,0\n', 'x.csv').diagnostics[0]!.message).toContain('no model has a weight');
  });
});
