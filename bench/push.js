#!/usr/bin/env node
// Benchmark for `mme-deploy push <directory>`: a generated 1 GiB repository pushed to a local S3 server (s3rver on
// 127.0.0.1) streamed (pack straight into the multipart upload) vs package-then-upload (write the .tar.gz, then
// push the file). Prints both wall times and their ratio, and what verifying an archive before its upload costs.
// Usage: npm run build && node bench/push.js [--size-mib 1024] [--keep]

'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fillFp16, fillRandom, mib, ONNX, writeLarge, writeOnnxModel } = require('./weight-files');

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'dist/bin/mme-deploy.js');
const args = process.argv.slice(2);
const sizeMib = Number(args[args.indexOf('--size-mib') + 1] || 1024) || 1024;
const keep = args.includes('--keep');
// s3rver's default account; the CLI reads them through the SDK's default credential chain.
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };

async function main() {
  for (const file of [CLI, path.join(ROOT, 'dist/lib/bundle/pack-repository.js'), path.join(ROOT, 'dist/lib/cli/push.js')]) {
    if (!fs.existsSync(file)) {
      console.error(`${path.relative(ROOT, file)} is missing: run \`npm run build\` first.`);
      process.exit(2);
    }
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mme-bench-push-'));
  const S3rver = require('s3rver');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: path.join(work, 's3'),
    configureBuckets: [{ name: 'bench', configs: [] }],
  });
  try {
    const { port } = await server.run();
    const endpointUrl = `http://127.0.0.1:${port}`;
    const repo = path.join(work, 'bench_ensemble');
    const started = Date.now();
    generateRepository(repo, sizeMib);
    console.log(`repository: ${repo} (${sizeMib} MiB, generated in ${seconds(Date.now() - started)} s); S3: s3rver at ${endpointUrl}`);
    // Warm the page cache once so both runs read the repository from memory alike.
    spawnSync('sh', ['-c', `find "${repo}" -type f -exec cat {} + > /dev/null`]);

    const streamed = await timed(() => cli(['push', repo, '--s3', 's3://bench/streamed/', '--endpoint-url', endpointUrl, '--json']));
    const archive = path.join(work, 'bench_ensemble.tar.gz');
    const packed = await timed(() => packageToFile(repo, archive));
    const uploaded = await timed(() => cli(['push', archive, '--s3', 's3://bench/packaged/', '--endpoint-url', endpointUrl, '--json']));
    const twoStep = packed.ms + uploaded.ms;
    // What verifying an archive before its upload costs (the default): the same push with --no-verify, and the
    // verification alone (validate --mme on the archive reads it to its end exactly as push does).
    const unverified = await timed(() =>
      cli(['push', archive, '--no-verify', '--s3', 's3://bench/unverified/', '--endpoint-url', endpointUrl, '--json']),
    );
    const verified = await timed(() => cli(['validate', '--mme', archive]));
    const archiveBytes = fs.statSync(archive).size;

    const streamedResult = JSON.parse(streamed.value);
    const uploadedResult = JSON.parse(uploaded.value);
    console.log('');
    console.log(
      `streamed push (pack into the upload):   ${seconds(streamed.ms)} s  (${mib(streamedResult.size)} MiB archive, ` +
        `sha256 ${streamedResult.sha256.slice(0, 12)}…)`,
    );
    console.log(
      `package then upload:                    ${seconds(twoStep)} s  (package ${seconds(packed.ms)} s via ${packed.value}, ` +
        `upload ${seconds(uploaded.ms)} s)`,
    );
    console.log(`ratio (package-then-upload / streamed): ${(twoStep / streamed.ms).toFixed(2)}x`);
    console.log(
      `archive push, verified (default):       ${seconds(uploaded.ms)} s; with --no-verify ${seconds(unverified.ms)} s ` +
        `(verification adds ${seconds(uploaded.ms - unverified.ms)} s)`,
    );
    console.log(
      `verification alone (validate --mme):    ${seconds(verified.ms)} s for ${mib(archiveBytes)} MiB of archive ` +
        `(${(archiveBytes / 1024 / 1024 / (verified.ms / 1000)).toFixed(0)} MiB/s, process start included)`,
    );
    console.log(
      'same archive bytes both ways: ' +
        `${streamedResult.sha256 === uploadedResult.sha256 ? 'yes' : 'no (the packer is not deterministic across runs)'}`,
    );
    console.log(
      `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}; s3rver writes to ${os.tmpdir()}`,
    );
  } finally {
    await server.close().catch(() => undefined);
    if (keep) console.log(`kept ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Runs the CLI asynchronously: s3rver lives in this process and must keep answering meanwhile. */
function cli(cliArgs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...cliArgs], {
      env: { ...process.env, ...CREDENTIALS, AWS_EC2_METADATA_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`mme-deploy ${cliArgs[0]} failed (exit ${code}):\n${stderr}`));
    });
  });
}

/** `mme-deploy package -o` when the CLI has it, else the same packer through the built library. */
async function packageToFile(repo, out) {
  const help = spawnSync(process.execPath, [CLI, 'package', '--help'], { encoding: 'utf8' });
  if (help.status === 0 && /--output/.test(help.stdout)) {
    await cli(['package', repo, '--output', out]);
    return 'the CLI';
  }
  const { packRepository } = require(path.join(ROOT, 'dist/lib/bundle/pack-repository.js'));
  const { pipeline } = require('node:stream/promises');
  const packed = await packRepository(repo);
  if (!packed.ok) throw new Error('the generated repository is invalid');
  await pipeline(packed.stream, fs.createWriteStream(out));
  return 'the library (no package command in the CLI yet)';
}

async function timed(fn) {
  const started = process.hrtime.bigint();
  const value = await fn();
  return { value, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/**
 * An ensemble shaped like the seeds: python preprocessing, an ONNX encoder with incompressible weights (70 %),
 * and fp16-like embeddings whose exponent bytes compress a little (30 %).
 */
function generateRepository(repo, totalMib) {
  const write = (rel, data) => {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), data);
  };
  write(
    'ensemble/config.pbtxt',
    'name: "ensemble"\nplatform: "ensemble"\nmax_batch_size: 8\n' +
      'input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]\n' +
      'output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]\n' +
      'ensemble_scheduling { step [\n' +
      '  { model_name: "preprocess" model_version: -1 input_map { key: "TEXT" value: "TEXT" } ' +
      'output_map { key: "INPUT_IDS" value: "ids" } },\n' +
      '  { model_name: "encoder" model_version: -1 input_map { key: "INPUT_IDS" value: "ids" } ' +
      'output_map { key: "LOGITS" value: "LOGITS" } }\n' +
      '] }\n',
  );
  fs.mkdirSync(path.join(repo, 'ensemble/1'), { recursive: true });
  write(
    'preprocess/config.pbtxt',
    'name: "preprocess"\nbackend: "python"\nmax_batch_size: 8\n' +
      'input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]\n' +
      'output [ { name: "INPUT_IDS" data_type: TYPE_INT64 dims: [ 128 ] } ]\n' +
      'instance_group [ { kind: KIND_CPU } ]\n',
  );
  write('preprocess/1/model.py', 'class TritonPythonModel:\n    def execute(self, requests):\n        return [None for _ in requests]\n');
  write(
    'encoder/config.pbtxt',
    'name: "encoder"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\n' +
      'input [ { name: "INPUT_IDS" data_type: TYPE_INT64 dims: [ 128 ] } ]\n' +
      'output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]\n',
  );
  const randomMib = Math.round(totalMib * 0.7);
  // A valid ONNX model (the validator reads its interface) around incompressible weights; batch dimension first.
  writeOnnxModel(path.join(repo, 'encoder/1/model.onnx'), {
    inputs: [['INPUT_IDS', ONNX.INT64, ['batch', 128]]],
    outputs: [['LOGITS', ONNX.FLOAT, ['batch', 2]]],
    weightsMib: randomMib,
    fill: fillRandom,
  });
  writeLarge(path.join(repo, 'encoder/1/embeddings.bin'), totalMib - randomMib, fillFp16);
}



function seconds(ms) {
  return (ms / 1000).toFixed(2);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
