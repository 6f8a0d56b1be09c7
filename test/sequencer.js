// The order in which Jest starts the test files. Jest's own sequencer runs the files that took longest in the last
// run first, so that no worker is left alone with a long file at the end; on a clean clone (CI) it has no timings and
// falls back to the file size, which says little here: the longest files are short ones that spawn tools. A file
// that declares its time in a comment, `// Slow: ~N s on a quiet 2-core machine`, is ordered by that N when Jest
// has no timing of its own for it; the others follow, largest first, as before.
const { openSync, readSync, closeSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const DECLARED = /\bSlow: ~(\d+) s on a quiet 2-core machine\b/;
const HEAD_BYTES = 4096;

class DeclaredTimeSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    // Jest's sort above: the files that failed last time first, then the untimed ones by size, then the timed ones,
    // longest first. Here a declared time counts as a timing. A file with neither stays where Jest put it: before the
    // timed ones when Jest has timings of other files (it is new, so its time is unknown), after the declared ones on
    // a clean clone (where every file lacks a timing, so the declared ones are the long ones).
    const cleanClone = sorted.every((test) => test.duration === undefined);
    const rank = new Map(sorted.map((test, index) => [test, index]));
    const known = new Map(sorted.map((test) => [test, test.duration ?? declaredMs(test.path)]));
    return sorted.sort((a, b) => {
      const failed = Number(this.hasFailed(b)) - Number(this.hasFailed(a));
      if (failed !== 0) return failed;
      const ta = known.get(a);
      const tb = known.get(b);
      if (ta !== undefined && tb !== undefined && ta !== tb) return tb - ta;
      if ((ta === undefined) !== (tb === undefined)) return (ta === undefined) === cleanClone ? 1 : -1;
      return rank.get(a) - rank.get(b);
    });
  }
}

/** The time a test file declares near its top, in milliseconds (Jest's unit for timings), or undefined. */
function declaredMs(path) {
  const head = Buffer.alloc(HEAD_BYTES);
  let fd;
  try {
    fd = openSync(path, 'r');
    const match = DECLARED.exec(head.toString('utf8', 0, readSync(fd, head, 0, HEAD_BYTES, 0)));
    return match ? Number(match[1]) * 1000 : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

module.exports = DeclaredTimeSequencer;
module.exports.declaredMs = declaredMs;
