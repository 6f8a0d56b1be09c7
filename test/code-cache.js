// V8's code cache for the modules a jest worker compiles again for every test file.
//
// Jest gives each test file its own module registry, so a worker compiles aws-cdk-lib, the AWS SDK and this
// repository's modules anew for each file that loads them (vm.compileFunction, with no code cache:
// jestjs/jest:packages/jest-runtime/src/internals/ModuleExecutor.ts:210). Profiled in band over test/push, test/aws,
// test/repository and cli-contract (30 files): compiling took 9.6 s of 91 s of CPU. Here a module is compiled as a
// vm.Script, and its code cache, made once the first test file that loaded it has run (so it holds the functions
// that file ran, not only the top level), serves every later file of the worker that loads the same source: the
// same files took 77 s, compiling 4.7 s.
//
// What runs is what jest's compileFunction would run: the module's code as the body of a function with jest's
// parameters, its lines and columns unchanged (the wrapper's first line gets line offset -1, so the module's first
// line is line 1 again). A source with no cache yet is first compiled by compileFunction itself, which throws jest's
// SyntaxError for a body that does not parse alone (one that closes the wrapper's brace, say): the wrapper only ever
// compiles a body that does. A cache serves only the very source it was made from (V8 checks only its length).
// Off with MME_TEST_CODE_CACHE=0, and under V8 coverage (whose offsets the wrapper would move).
'use strict';
const vm = require('node:vm');

/** filename -> the source its cache was made from, and the cache. */
const cache = new Map();
/** Scripts compiled since the last test file ended whose cache is still to be made: [filename, source, script]. */
let pending = [];
/** Modules compiled from a cache, and caches made, in this process. */
const counts = { served: 0, made: 0 };

/**
 * compileFunction with the code cache: the function that `code` is the body of, made in `options`' parsingContext.
 * `compileFunction` is the original, which first compiles every source that has no cache yet (and throws its errors).
 */
function compileCached(compileFunction, code, params, options) {
  const filename = options && options.filename;
  if (typeof filename !== 'string' || !options.parsingContext || options.contextExtensions || options.cachedData) {
    return compileFunction(code, params, options);
  }
  const known = cache.get(filename);
  const cachedData = known && known.code === code ? known.data : undefined;
  // A body compileFunction compiles is a whole function body: the wrapper's closing brace closes it.
  if (!cachedData) compileFunction(code, params, options);
  // A hashbang line is allowed at the start of a function body's source, not inside a wrapper: the same as a comment.
  const body = code.startsWith('#!') ? `//${code.slice(2)}` : code;
  const script = new vm.Script(`(function (${params.join(', ')}) {\n${body}\n})`, {
    filename,
    lineOffset: -1,
    ...(options.importModuleDynamically ? { importModuleDynamically: options.importModuleDynamically } : {}),
    ...(cachedData ? { cachedData } : {}),
  });
  if (!cachedData || script.cachedDataRejected) pending.push([filename, code, script]);
  else counts.served++;
  return script.runInContext(options.parsingContext);
}

/** Makes the caches of the scripts compiled since the last call: called when a test file has run. */
function afterTestFile() {
  const done = pending;
  pending = [];
  for (const [filename, code, script] of done) {
    try {
      cache.set(filename, { code, data: script.createCachedData() });
      counts.made++;
    } catch {
      // no cache for this one: it is compiled again next time
    }
  }
}

let installed = false;

/** Has vm.compileFunction (which jest-runtime calls for every module) use the code cache, once per process. */
function installCodeCache() {
  if (installed || process.env.MME_TEST_CODE_CACHE === '0') return;
  installed = true;
  const compileFunction = vm.compileFunction;
  vm.compileFunction = Object.assign(
    function cachedCompileFunction(code, params, options) {
      return compileCached((...args) => compileFunction.apply(this, args), code, params ?? [], options);
    },
    { uncached: compileFunction },
  );
}

/** How many modules were compiled from a cache, and how many caches were made, in this process. */
function codeCacheCounts() {
  return { ...counts };
}

module.exports = { installCodeCache, afterTestFile, compileCached, codeCacheCounts };
