// An App given no outdir synthesizes into a directory of its own, `<tmpdir>/cdk.outXXXXXX`, which aws-cdk-lib removes
// on the process's 'exit' event (aws/aws-cdk-cli:packages/@aws-cdk/cloud-assembly-api/lib/cloud-assembly.ts:533 and
// :550), an event a test file's sandboxed process never sees (as its line 42 says of Jest): some 200 a run were left
// in /tmp. The jest worker's fs (a core module: the same object in every test file's sandbox) notes each one made, and
// the test environment (test/jest-environment.js) removes those a test file made once it has run.
'use strict';
const { basename } = require('node:path');

/**
 * Has `fs.mkdtempSync` note the directories it makes for a `cdk.out` prefix; `removeMade()` removes those noted since
 * the last call.
 */
function noteCdkOutdirs(fs) {
  const made = new Set();
  const mkdtempSync = fs.mkdtempSync;
  fs.mkdtempSync = function mkdtempSyncNoted(prefix, ...rest) {
    const dir = mkdtempSync.call(this, prefix, ...rest);
    if (typeof prefix === 'string' && typeof dir === 'string' && basename(prefix) === 'cdk.out') made.add(dir);
    return dir;
  };
  return {
    removeMade() {
      for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
      made.clear();
    },
  };
}

module.exports = { noteCdkOutdirs };
