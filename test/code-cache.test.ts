// The code cache the test environment gives jest's module compilation (test/code-cache.js): what runs is what
// compileFunction would run, and a cache serves only the source it was made from.

import vm from 'node:vm';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const codeCache = require('./code-cache') as {
  compileCached: (
    compileFunction: typeof vm.compileFunction,
    code: string,
    params: string[],
    options: vm.CompileFunctionOptions,
  ) => (...args: unknown[]) => unknown;
  afterTestFile: () => void;
  codeCacheCounts: () => { served: number; made: number };
};

/** compileFunction itself: the test environment has this process's vm.compileFunction use the cache. */
const compileFunction =
  (vm.compileFunction as typeof vm.compileFunction & { uncached?: typeof vm.compileFunction }).uncached ?? vm.compileFunction;
const params = ['module', 'exports'];
let files = 0;
/** A module file name of its own for each test: the cache is keyed by file name. */
const file = () => `/virtual/module-${++files}.js`;
const compile = (code: string, filename: string, context = vm.createContext()) =>
  codeCache.compileCached(compileFunction, code, params, { filename, parsingContext: context });

/** The `file:line:column` of the first frame of what `run` throws. */
function thrownAt(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return /\((\/virtual\/[^)]+)\)|at (\/virtual\/\S+)/.exec((err as Error).stack ?? '')!.slice(1).find(Boolean)!;
  }
  throw new Error('nothing was thrown');
}

const THROWS = "const x = 1;\n  if (x) throw new Error('line 2');\nreturn x;";

test('a module runs as compileFunction runs it: its parameters, this, and the line and column of a throw', () => {
  const name = file();
  const exports = {};
  const fn = compile('exports.self = this; exports.arg = module.id; return 7;', name);
  expect(fn.call(exports, { id: 'm' }, exports)).toBe(7);
  expect(exports).toEqual({ self: exports, arg: 'm' });

  const throwing = file();
  const original = compileFunction(THROWS, params, { filename: throwing });
  expect(thrownAt(() => original())).toBe(`${throwing}:2:16`);
  expect(thrownAt(() => compile(THROWS, throwing)())).toBe(`${throwing}:2:16`);
  codeCache.afterTestFile();
  // The next test file's compile of the same source comes from the cache, and throws at the same place.
  const { served } = codeCache.codeCacheCounts();
  expect(thrownAt(() => compile(THROWS, throwing)())).toBe(`${throwing}:2:16`);
  expect(codeCache.codeCacheCounts().served).toBe(served + 1);
});

test('a cache serves only the very source it was made from, not another of the same length', () => {
  codeCache.afterTestFile(); // what the tests before this one compiled (in a random order: --randomize)
  const name = file();
  expect(compile('return 1 + 1;', name)()).toBe(2);
  const { made, served } = codeCache.codeCacheCounts();
  codeCache.afterTestFile();
  expect(codeCache.codeCacheCounts().made).toBe(made + 1);
  // V8 accepts a cache for any source of the same length and would run 1 + 1 here.
  expect(compile('return 2 + 2;', name)()).toBe(4);
  expect(codeCache.codeCacheCounts().served).toBe(served);
  expect(compile('return 2 + 2;', name)()).toBe(4);
  codeCache.afterTestFile();
  expect(compile('return 2 + 2;', name)()).toBe(4);
  expect(codeCache.codeCacheCounts().served).toBe(served + 1);
});

test('a body that does not parse alone is refused as compileFunction refuses it, and nothing of it runs', () => {
  const context = vm.createContext({});
  const breakingOut = '}); globalThis.ran = true; (function () {';
  const refusal = (() => {
    try {
      compileFunction(breakingOut, params, { filename: 'x.js' });
    } catch (err) {
      return err as Error;
    }
    throw new Error('compileFunction compiled it');
  })();
  const thrown = (() => {
    try {
      compile(breakingOut, file(), context);
    } catch (err) {
      return err as Error;
    }
    throw new Error('the cache compiled it');
  })();
  // compileFunction's own error, made in the module's context (so not this realm's SyntaxError).
  expect([thrown.name, thrown.message]).toEqual(['SyntaxError', refusal.message]);
  expect(vm.runInContext('globalThis.ran', context)).toBeUndefined();
});

test('a hashbang line at the start of a module is a comment, as compileFunction takes it', () => {
  expect(compile('#!/usr/bin/env node\nreturn 5;', file())()).toBe(5);
});
