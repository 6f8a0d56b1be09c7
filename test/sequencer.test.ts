import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Sequencer = require('./sequencer.js');

interface FakeTest {
  path: string;
  duration?: number;
  context: { config: { cache: boolean }; hasteFS: { getSize(path: string): number } };
}

describe('test/sequencer.js (the order Jest starts the test files in)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mme-sequencer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function files(specs: Array<[string, string]>): FakeTest[] {
    const sizes = new Map<string, number>();
    const context = { config: { cache: false }, hasteFS: { getSize: (path: string) => sizes.get(path) ?? 0 } };
    return specs.map(([name, text]) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      sizes.set(path, text.length);
      return { path, context };
    });
  }
  const names = (tests: FakeTest[]) => tests.map((test) => test.path.slice(dir.length + 1));

  it('without timings, runs the files that declare a time first, longest first, then the rest largest first', () => {
    const tests = files([
      ['small.test.ts', '// a unit test\n'],
      ['big.test.ts', `// a big unit test\n${'x'.repeat(5000)}`],
      ['corpus.test.ts', '/** Validates every repository.\n * Slow: ~110 s on a quiet 2-core machine. */\n'],
      ['tarball.test.ts', '// Slow: ~74 s on a quiet 2-core machine (npm pack, tsc)\n'],
    ]);
    expect(names(new Sequencer({}).sort(tests))).toEqual(['corpus.test.ts', 'tarball.test.ts', 'big.test.ts', 'small.test.ts']);
  });

  it('with timings of the last run, a new file (no timing, no declaration) starts first, as Jest would start it', () => {
    const tests = files([
      ['timed-long.test.ts', '// one\n'],
      ['timed-short.test.ts', '// two\n'],
      ['declared.test.ts', '// Slow: ~20 s on a quiet 2-core machine\n'],
      ['new.test.ts', '// new\n'],
    ]);
    const sequencer = new Sequencer({});
    // Jest's own cache of the last run: [0 failed | 1 passed, milliseconds] per file (@jest/test-sequencer).
    sequencer._cache.set(tests[0].context, { [tests[0].path]: [1, 60000], [tests[1].path]: [1, 1000] });
    expect(names(sequencer.sort(tests))).toEqual(['new.test.ts', 'timed-long.test.ts', 'declared.test.ts', 'timed-short.test.ts']);
  });

  it('reads the declaration only near the top of the file, and only in its exact form', () => {
    const tests = files([
      ['late.test.ts', `${'\n'.repeat(5000)}// Slow: ~500 s on a quiet 2-core machine\n`],
      ['vague.test.ts', '// Slow: 500 s\n'],
      ['declared.test.ts', '// Slow: ~3 s on a quiet 2-core machine\n'],
    ]);
    expect(Sequencer.declaredMs(tests[0].path)).toBeUndefined();
    expect(Sequencer.declaredMs(tests[1].path)).toBeUndefined();
    expect(Sequencer.declaredMs(tests[2].path)).toBe(3000);
    expect(Sequencer.declaredMs(join(dir, 'missing.test.ts'))).toBeUndefined();
    expect(names(new Sequencer({}).sort(tests))[0]).toBe('declared.test.ts');
  });
});
