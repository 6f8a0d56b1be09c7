#!/usr/bin/env node
// Benchmark for `mme-deploy local load`: extracts a generated archive (weights-like, mostly incompressible) into a
// models directory and sends the LOAD to a stand-in container on 127.0.0.1, and compares with GNU `tar -xzf` of the
// same archive. Prints wall time, throughput and peak RSS of the CLI process.
// Usage: npm run build && node bench/local-load.js [--size-mib 256] [--keep]

'use strict';

const { execFileSync, spawnSync } = require('node:child_process');
const { randomFillSync } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { built } = require('./measure');

const args = process.argv.slice(2);
const sizeMib = Number(args[args.indexOf('--size-mib') + 1] || 256) || 256;
const keep = args.includes('--keep');

async function main() {
  const cli = built('bin/mme-deploy.js');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mme-bench-local-'));
  try {
    const archive = makeArchive(work, sizeMib);
    const archiveMib = fs.statSync(archive).size / 2 ** 20;

    const tarDir = path.join(work, 'tar-out');
    fs.mkdirSync(tarDir);
    const tarStart = process.hrtime.bigint();
    execFileSync('tar', ['-xzf', archive, '-C', tarDir]);
    const tarSeconds = Number(process.hrtime.bigint() - tarStart) / 1e9;

    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(req.method === 'GET' ? 404 : 200);
        res.end();
      });
    });
    await new Promise((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${server.address().port}`;
    const timeBin = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
    const command = [process.execPath, cli, 'local', 'load', archive, '--models-dir', path.join(work, 'models'), '--url', url, '--json'];
    const start = process.hrtime.bigint();
    const run = await new Promise((done) => {
      const { spawn } = require('node:child_process');
      const child = timeBin ? spawn(timeBin, ['-f', '%M', ...command]) : spawn(command[0], command.slice(1));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('close', (status) => done({ status, stdout, stderr }));
    });
    const cliSeconds = Number(process.hrtime.bigint() - start) / 1e9;
    server.close();
    if (run.status !== 0) throw new Error(`local load failed: ${run.stderr}`);
    const rssKib = timeBin ? Number(run.stderr.trim().split('\n').pop()) : NaN;

    console.log(`archive: ${archiveMib.toFixed(1)} MiB compressed, ${sizeMib} MiB of files`);
    console.log(`tar -xzf:          ${tarSeconds.toFixed(2)} s  (${(sizeMib / tarSeconds).toFixed(0)} MiB/s of files)`);
    console.log(
      `mme-deploy local load: ${cliSeconds.toFixed(2)} s  (${(sizeMib / cliSeconds).toFixed(0)} MiB/s, ` +
        `${(cliSeconds / tarSeconds).toFixed(2)}x tar, incl. node start-up and the HTTP LOAD)`,
    );
    if (!Number.isNaN(rssKib)) console.log(`peak RSS of the CLI: ${(rssKib / 1024).toFixed(0)} MiB`);
  } finally {
    if (keep) console.log(`kept ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

/** An ensemble-shaped repository: one large weight file, a few small ones; random bytes so gzip cannot shrink it. */
function makeArchive(work, mib) {
  const repo = path.join(work, 'repo');
  for (const dir of ['ensemble/1', 'classifier/1', 'preprocess/1']) fs.mkdirSync(path.join(repo, dir), { recursive: true });
  // A real two-step ensemble: local load applies the MME archive rules, which refuse an archive SageMaker would resolve
  // by readdir order.
  fs.writeFileSync(
    path.join(repo, 'ensemble/config.pbtxt'),
    'name: "ensemble"\nplatform: "ensemble"\nensemble_scheduling { step [\n' +
      '  { model_name: "preprocess" model_version: -1 input_map { key: "TEXT" value: "text" } output_map { key: "IDS" value: "ids" } },\n' +
      '  { model_name: "classifier" model_version: -1 input_map { key: "input_ids" value: "ids" } ' +
      'output_map { key: "logits" value: "logits" } }\n' +
      '] }\n',
  );
  fs.writeFileSync(path.join(repo, 'classifier/config.pbtxt'), 'name: "classifier"\nbackend: "onnxruntime"\n');
  fs.writeFileSync(path.join(repo, 'preprocess/config.pbtxt'), 'name: "preprocess"\nbackend: "python"\n');
  fs.writeFileSync(path.join(repo, 'preprocess/1/model.py'), 'import numpy as np\n');
  const fd = fs.openSync(path.join(repo, 'classifier/1/model.onnx'), 'w');
  const chunk = Buffer.alloc(4 * 2 ** 20);
  for (let written = 0; written < mib * 2 ** 20; written += chunk.length) {
    randomFillSync(chunk);
    fs.writeSync(fd, chunk);
  }
  fs.closeSync(fd);
  const archive = path.join(work, 'bench.tar.gz');
  const tar = spawnSync('tar', ['-C', repo, '-czf', archive, '.']);
  if (tar.status !== 0) throw new Error(`tar -czf failed: ${tar.stderr}`);
  return archive;
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
