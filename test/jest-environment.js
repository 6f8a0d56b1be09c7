// The test environment: jest's node environment, plus a quick exit for the jest worker that loads it, V8's code cache
// for the modules every test file of the worker compiles again (test/code-cache.js), Node's own require for the
// modules the tests' fixtures load once per worker, and the removal of the output directories aws-cdk-lib made for the
// test file's Apps (test/cdk-outdirs.js).
//
// A worker ends when jest tells it to by leaving its event loop empty; jest waits 500 ms for that, then kills it and
// reports "A worker process has failed to exit gracefully". A worker that ran the AWS SDK or aws-cdk-lib holds a
// heap of hundreds of MB, and a natural exit frees it page by page (node disposes the V8 isolate): traced under
// load, 485 ms of munmap/madvise after the event loop was already empty, then the kill. No handle was left open
// (process.getActiveResourcesInfo() showed only the worker's own pipes). process.exit() skips that teardown, so once
// the worker's 'exit' event fires (its loop is empty: every test file has finished) it exits at once.
const fs = require('node:fs');
const { TestEnvironment } = require('jest-environment-node');
const { noteCdkOutdirs } = require('./cdk-outdirs');
const { afterTestFile, installCodeCache } = require('./code-cache');

// Only in a jest worker (a forked child); a run in band is jest's own process, which exits as jest decides.
if (process.send && process.env.JEST_WORKER_ID) {
  process.once('exit', (code) => process.reallyExit(code));
}

// Jest evaluates every module again for each test file, in the file's own sandbox: a heavy module that only serves
// the tests from outside (s3rver and its ~300 files: koa, winston, busboy) would be loaded again by each of the nine
// files that start one. Loaded with this, Node's own require, it is loaded once per worker, outside the sandbox (and
// outside jest's mocks and fake timers). Never for the code under test, which must stay in the sandbox to be mocked.
const WORKER_REQUIRE = Symbol.for('mme-deploy.workerRequire');

// The directories aws-cdk-lib makes for Apps given no outdir, removed after each test file (test/cdk-outdirs.js).
const cdkOutdirs = noteCdkOutdirs(fs);

class Environment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global[WORKER_REQUIRE] = require;
    // V8 coverage counts offsets in the compiled source, which the code cache's wrapper would move.
    const { collectCoverage, coverageProvider } = config.globalConfig;
    if (!(collectCoverage && coverageProvider === 'v8')) installCodeCache();
  }

  async teardown() {
    await super.teardown();
    afterTestFile();
    cdkOutdirs.removeMade();
  }
}

module.exports = Environment;
