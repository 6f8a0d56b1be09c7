#!/usr/bin/env node
// Benchmark for reading hostile archives (issue 14): runs `mme-deploy plan` on archives built to exhaust a reader
// — 10 GiB of zeros as a config.pbtxt, as weights, or as nothing at all, and 1,000,000 entries — and prints wall
// time and peak RSS of the CLI process for each. Target: peak RSS < 200 MB on every one.
// The archives are generated as streams (a multi-member gzip whose zero members are compressed once and repeated),
// so the 10 GiB cases take a few MiB of disk and seconds to make.
// Usage: npm run build && node bench/read-archive.js [--gib 10] [--entries 1000000] [--keep]

'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { built, flag, numberOption, requireGnuTime, timeCommand } = require('./measure');

const GIB = numberOption('--gib', 10);
const ENTRIES = numberOption('--entries', 1_000_000);
const keep = flag('--keep');
const TARGET_RSS_MB = 200;

function load() {
  built('bin/mme-deploy.js');
  return require(built('lib/archive/tar-header.js'));
}

const CONFIG = Buffer.from('name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 8\n' +
  'input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] } ]\n');

/**
 * Writes a gzip file from parts: Buffers are compressed as members of their own; `{ zeros: n }` is n bytes of zeros,
 * written as one member of 64 MiB of zeros compressed once and repeated (plus a member for the rest).
 */
function writeGzip(file, parts) {
  const fd = fs.openSync(file, 'w');
  const block = 64 << 20;
  const zeroMember = zlib.gzipSync(Buffer.alloc(block), { level: 9 });
  try {
    for (const part of parts) {
      if (Buffer.isBuffer(part)) {
        fs.writeSync(fd, zlib.gzipSync(part, { level: 1 }));
        continue;
      }
      let left = part.zeros;
      for (; left >= block; left -= block) fs.writeSync(fd, zeroMember);
      if (left > 0) fs.writeSync(fd, zlib.gzipSync(Buffer.alloc(left), { level: 9 }));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** A tar of `count` one-byte files in `m/1/`, plus a config, streamed through one gzip member. */
async function writeManyEntries(file, count, tar) {
  const gzip = zlib.createGzip({ level: 1 });
  const out = fs.createWriteStream(file);
  const done = new Promise((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  gzip.pipe(out);
  let written = 0;
  const write = (bytes) => {
    written += bytes.length;
    return gzip.write(bytes) ? undefined : new Promise((resolve) => gzip.once('drain', resolve));
  };
  const one = Buffer.alloc(tar.TAR_BLOCK);
  one[0] = 0x61;
  await write(file_(tar, 'm/config.pbtxt', CONFIG));
  await write(tar.encodeHeaders({ path: 'm/1', type: 'directory', size: 0, mode: 0o755 }));
  for (let i = 0; i < count; i++) {
    const pending = write(Buffer.concat([tar.encodeHeaders({ path: `m/1/f${i}.bin`, type: 'file', size: 1, mode: 0o644 }), one]));
    if (pending) await pending;
  }
  gzip.end(tar.endOfArchive(written));
  await done;
}

function file_(tar, name, content) {
  return Buffer.concat([
    tar.encodeHeaders({ path: name, type: 'file', size: content.length, mode: 0o644 }),
    content,
    Buffer.alloc(tar.paddingAfter(content.length)),
  ]);
}

function runPlan(archive) {
  const cli = built('bin/mme-deploy.js');
  const timed = timeCommand(process.execPath, [cli, 'plan', archive, '--requests', '1000']);
  const said = timed.stderr.join(' ').slice(0, 110);
  return { seconds: timed.seconds, rssMb: Math.round(timed.rssKib / 1024), code: timed.status, said };
}

async function main() {
  const tar = load();
  requireGnuTime();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mme-bench-read-'));
  const zeros = GIB * 2 ** 30;
  const cases = [
    {
      name: `config.pbtxt of ${GIB} GiB zeros`,
      make: (file) =>
        writeGzip(file, [
          tar.encodeHeaders({ path: 'm/config.pbtxt', type: 'file', size: zeros, mode: 0o644 }),
          { zeros },
          tar.endOfArchive(0),
        ]),
    },
    {
      name: `weights of ${GIB} GiB zeros (valid archive)`,
      make: (file) =>
        writeGzip(file, [
          Buffer.concat([
            file_(tar, 'm/config.pbtxt', CONFIG),
            tar.encodeHeaders({ path: 'm/1/model.onnx', type: 'file', size: zeros, mode: 0o644 }),
          ]),
          { zeros },
          tar.endOfArchive(0),
        ]),
    },
    { name: `${GIB} GiB of zeros and nothing else`, make: (file) => writeGzip(file, [{ zeros }]) },
    { name: `${ENTRIES.toLocaleString('en')} entries`, make: (file) => writeManyEntries(file, ENTRIES, tar) },
  ];
  console.log(
    `machine: ${os.availableParallelism()} cores, node ${process.version}, ` +
      `load average ${os.loadavg().map((n) => n.toFixed(1)).join(' ')}`,
  );
  console.log(
    `${'archive'.padEnd(40)} ${'gz MiB'.padStart(7)} ${'make s'.padStart(7)} ` +
      `${'plan s'.padStart(7)} ${'peak RSS MB'.padStart(12)}  exit  what plan said`,
  );
  let worst = 0;
  try {
    for (const [i, c] of cases.entries()) {
      const file = path.join(work, `case-${i}.tar.gz`);
      const start = process.hrtime.bigint();
      await c.make(file);
      const made = Number(process.hrtime.bigint() - start) / 1e9;
      const run = runPlan(file);
      worst = Math.max(worst, run.rssMb);
      const mib = fs.statSync(file).size / 2 ** 20;
      console.log(
        `${c.name.padEnd(40)} ${mib.toFixed(1).padStart(7)} ${made.toFixed(1).padStart(7)} ` +
          `${run.seconds.toFixed(1).padStart(7)} ${String(run.rssMb).padStart(12)}  ${String(run.code).padStart(4)}  ${run.said}`,
      );
    }
  } finally {
    if (keep) console.log(`archives kept in ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
  console.log(`target: peak RSS < ${TARGET_RSS_MB} MB on every archive: ${worst < TARGET_RSS_MB ? 'met' : 'NOT met'} (worst ${worst} MB)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
