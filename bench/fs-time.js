// Preloaded (`node -r bench/fs-time.js ...`) by bench/validate.js: times every synchronous file-system call the process
// makes, and at exit writes to the file MME_BENCH_FS_TIME names how long they took in all, by function, beside the
// process's time from this preload to its exit. Splits a command's time into its system calls (with node's own
// wrappers around them) and the rest: JavaScript, garbage collection, waiting. Timing adds about half a microsecond to
// each call (the floor's 40,000 calls: 0.66-0.68 s with it, 0.64-0.65 s without).
'use strict';
const fs = require('node:fs');

const began = process.hrtime.bigint();
const spent = {};
const NAMES = [
  'accessSync', 'closeSync', 'fstatSync', 'lstatSync', 'openSync', 'readdirSync', 'readFileSync', 'readlinkSync',
  'readSync', 'realpathSync', 'statSync',
];

/** Calls under way: node's readFileSync calls fs.openSync, fs.readSync and fs.closeSync itself, counted once, as it. */
let depth = 0;

/** `call`, timed into `tally` when no timed call is under way. */
function timed(call, tally) {
  return function (...args) {
    if (depth > 0) return call.apply(this, args);
    depth += 1;
    const start = process.hrtime.bigint();
    try {
      return call.apply(this, args);
    } finally {
      tally.ns += Number(process.hrtime.bigint() - start);
      tally.calls += 1;
      depth -= 1;
    }
  };
}

for (const name of NAMES) {
  const original = fs[name];
  const tally = (spent[name] = { calls: 0, ns: 0 });
  const wrapper = timed(original, tally);
  // realpathSync.native is the one the validator calls; it counts as realpathSync.
  if (original.native) wrapper.native = timed(original.native, tally);
  fs[name] = wrapper;
}

process.on('exit', () => {
  const file = process.env.MME_BENCH_FS_TIME;
  if (!file) return;
  const total = Number(process.hrtime.bigint() - began);
  const calls = Object.fromEntries(Object.entries(spent).filter(([, t]) => t.calls > 0));
  const fsNs = Object.values(calls).reduce((sum, t) => sum + t.ns, 0);
  fs.writeFileSync(file, JSON.stringify({ totalSeconds: total / 1e9, fsSeconds: fsNs / 1e9, calls }));
});
