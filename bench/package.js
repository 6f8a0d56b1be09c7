#!/usr/bin/env node
// Benchmark for `mme-deploy package`: packs a generated 1 GiB repository shaped like real weights with our packer,
// GNU `tar -czf` and (when installed) `tar -cf - | pigz`, and prints wall time, peak RSS and archive size for each.
// Targets (issue 3): >= 3x faster than tar -czf, archive <= 1.01x its size, peak RSS <= 150 MB.
// Usage: npm run build && node bench/package.js [--size-mib 1024] [--keep]

'use strict';

const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { built, flag, numberOption, requireGnuTime, timeCommand } = require('./measure');
const { fillFp16, fillRandom, mib, ONNX, writeLarge, writeOnnxModel } = require('./weight-files');

const sizeMib = numberOption('--size-mib', 1024) || 1024;
const keep = flag('--keep');

function main() {
  const libArchive = built('lib/archive/index.js');
  requireGnuTime();
  const loadAtStart = os.loadavg().map((n) => n.toFixed(1)).join(' ');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mme-bench-package-'));
  try {
    const repo = path.join(work, 'ensemble_repo');
    const started = Date.now();
    const repoBytes = generateRepository(repo, sizeMib);
    console.log(`repository: ${repo} (${mib(repoBytes)} MiB, generated in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    // Read everything once so that every contestant starts from the same warm page cache.
    execFileSync('tar', ['-cf', '/dev/null', '-C', repo, '.']);
    execFileSync('sh', ['-c', `find "${repo}" -type f -exec cat {} + > /dev/null`]);

    const results = [];
    const ours = oursCommand(repo, path.join(work, 'ours.tar.gz'), libArchive);
    results.push(run(`mme-deploy package (${ours.via})`, ours.command, ours.out));
    results.push(run('tar -czf', `tar -C "${repo}" -czf "${work}/tar.tar.gz" .`, `${work}/tar.tar.gz`));
    if (spawnSync('sh', ['-c', 'command -v pigz'], { stdio: 'ignore' }).status === 0) {
      results.push(run('tar -cf - | pigz', `tar -C "${repo}" -cf - . | pigz > "${work}/pigz.tar.gz"`, `${work}/pigz.tar.gz`));
    } else {
      console.log('pigz is not installed: skipped.');
    }

    const gzipOk = spawnSync('gzip', ['-t', ours.out]).status === 0;
    const members = execFileSync('tar', ['-tzf', ours.out], { encoding: 'utf8', maxBuffer: 64 << 20 }).split('\n').length - 1;
    const reference = results.find((r) => r.name === 'tar -czf');
    console.log('');
    console.log(
      pad('contestant', 44) +
        pad('wall s', 9) +
        pad('peak RSS MB', 13) +
        pad('archive MiB', 13) +
        pad('speed vs tar -czf', 19) +
        'size vs tar -czf',
    );
    for (const r of results) {
      console.log(
        pad(r.name, 44) +
          pad(r.seconds.toFixed(2), 9) +
          pad((r.rssKib / 1024).toFixed(0), 13) +
          pad(mib(r.size), 13) +
          pad(`${(reference.seconds / r.seconds).toFixed(2)}x`, 19) +
          `${(r.size / reference.size).toFixed(4)}x`,
      );
    }
    const mine = results[0];
    console.log('');
    console.log(`our archive: gzip -t ${gzipOk ? 'ok' : 'FAILED'}, ${members} members listed by GNU tar`);
    console.log(
      `targets: speed >= 3x: ${verdict(reference.seconds / mine.seconds >= 3)}; size <= 1.01x: ` +
        `${verdict(mine.size / reference.size <= 1.01)}; peak RSS <= 150 MB: ${verdict(mine.rssKib / 1024 <= 150)}`,
    );
    console.log(
      `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, ` +
        `load average at start ${loadAtStart} (other work on the machine slows every contestant)`,
    );
  } finally {
    if (keep) console.log(`kept ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The CLI when it has a working `package` command, else a driver over the built library. */
function oursCommand(repo, out, libArchive) {
  const cli = built('bin/mme-deploy.js');
  const help = spawnSync(process.execPath, [cli, 'package', '--help'], { encoding: 'utf8' });
  if (help.status === 0 && /-o, --output|--output/.test(help.stdout)) {
    return { via: 'CLI', command: `"${process.execPath}" "${cli}" package "${repo}" -o "${out}"`, out };
  }
  const driver = [
    `const a = require(${JSON.stringify(libArchive)});`,
    '(async () => {',
    `  const { entries, problems } = await a.collectEntries(${JSON.stringify(repo)});`,
    '  if (problems.length) throw new Error(JSON.stringify(problems));',
    `  await a.writeStreamAtomically(a.createTarGzStream(entries), ${JSON.stringify(out)});`,
    '})().catch((e) => { console.error(e); process.exit(1); });',
  ].join('\n');
  const driverFile = path.join(path.dirname(out), 'driver.js');
  fs.writeFileSync(driverFile, driver);
  return { via: 'library driver; the CLI has no package command yet', command: `"${process.execPath}" "${driverFile}"`, out };
}

function run(name, command, out) {
  const { seconds, rssKib, status, stderr } = timeCommand('sh', ['-c', command]);
  if (status !== 0) throw new Error(`${name} failed:\n${stderr.join('\n')}`);
  const size = fs.statSync(out).size;
  console.log(`${name}: ${seconds.toFixed(2)} s, peak RSS ${(rssKib / 1024).toFixed(0)} MB, ${mib(size)} MiB`);
  return { name, seconds, rssKib, size };
}

/**
 * A TargetModel-shaped repository: a python → ONNX → PyTorch → TensorRT ensemble with tokenizer text, mostly
 * incompressible weights (ONNX, TensorRT plan), and fp16-like tensors (the PyTorch decoder, embeddings) whose
 * exponent bytes compress a little, as real checkpoints do.
 */
function generateRepository(repo, totalMib) {
  const write = (rel, data) => {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), data);
  };
  const config = (name, body) => write(`${name}/config.pbtxt`, `name: "${name}"\n${body}`);
  config('ensemble', 'platform: "ensemble"\nmax_batch_size: 8\n' + ensembleBody());
  fs.mkdirSync(path.join(repo, 'ensemble/1'), { recursive: true });
  config('preprocess', 'backend: "python"\nmax_batch_size: 8\n' + io('TEXT', 'TYPE_STRING', '[ 1 ]', 'INPUT_IDS', 'TYPE_INT64', '[ 128 ]'));
  write(
    'preprocess/1/model.py',
    'import numpy as np\nimport triton_python_backend_utils as pb_utils\n\n\nclass TritonPythonModel:\n' +
      '    def execute(self, requests):\n        return [None for _ in requests]\n',
  );
  let vocab = '';
  for (let i = 0; vocab.length < 4 << 20; i++) vocab += `token_${i.toString(36)}\n`;
  write('preprocess/1/tokenizer/vocab.txt', vocab);
  write('preprocess/1/tokenizer/tokenizer_config.json', JSON.stringify({ do_lower_case: true, model_max_length: 512 }, null, 2));
  config(
    'encoder',
    'platform: "onnxruntime_onnx"\nmax_batch_size: 8\n' + io('INPUT_IDS', 'TYPE_INT64', '[ 128 ]', 'HIDDEN', 'TYPE_FP16', '[ 128, 768 ]'),
  );
  config(
    'decoder',
    'platform: "pytorch_libtorch"\nmax_batch_size: 8\n' + io('INPUT__0', 'TYPE_FP16', '[ 128, 768 ]', 'OUTPUT__0', 'TYPE_FP16', '[ 768 ]'),
  );
  config(
    'classifier',
    'platform: "tensorrt_plan"\nmax_batch_size: 8\n' + io('POOLED', 'TYPE_FP16', '[ 768 ]', 'LOGITS', 'TYPE_FP16', '[ 2 ]'),
  );

  const remaining = totalMib - Math.ceil(fs.statSync(path.join(repo, 'preprocess/1/tokenizer/vocab.txt')).size / (1 << 20));
  const randomMib = Math.round(remaining * 0.7);
  const fp16Mib = remaining - randomMib;
  // A valid ONNX model (the validator reads its interface) around incompressible weights; batch dimension first.
  writeOnnxModel(path.join(repo, 'encoder/1/model.onnx'), {
    inputs: [['INPUT_IDS', ONNX.INT64, ['batch', 128]]],
    outputs: [['HIDDEN', ONNX.FLOAT16, ['batch', 128, 768]]],
    weightsMib: Math.round(randomMib * 0.6),
    fill: fillRandom,
  });
  writeLarge(path.join(repo, 'classifier/1/model.plan'), randomMib - Math.round(randomMib * 0.6), fillRandom);
  writeLarge(path.join(repo, 'decoder/1/model.pt'), Math.round(fp16Mib * 0.7), fillFp16);
  writeLarge(path.join(repo, 'encoder/1/embeddings.bin'), fp16Mib - Math.round(fp16Mib * 0.7), fillFp16);
  return Number(execFileSync('du', ['-sb', repo], { encoding: 'utf8' }).split('\t')[0]);
}

function ensembleBody() {
  return (
    'input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]\n' +
    'output [ { name: "LOGITS" data_type: TYPE_FP16 dims: [ 2 ] } ]\n' +
    'ensemble_scheduling { step [\n' +
    '  { model_name: "preprocess" model_version: -1 input_map { key: "TEXT" value: "TEXT" } ' +
    'output_map { key: "INPUT_IDS" value: "ids" } },\n' +
    '  { model_name: "encoder" model_version: -1 input_map { key: "INPUT_IDS" value: "ids" } ' +
    'output_map { key: "HIDDEN" value: "hidden" } },\n' +
    '  { model_name: "decoder" model_version: -1 input_map { key: "INPUT__0" value: "hidden" } ' +
    'output_map { key: "OUTPUT__0" value: "pooled" } },\n' +
    '  { model_name: "classifier" model_version: -1 input_map { key: "POOLED" value: "pooled" } ' +
    'output_map { key: "LOGITS" value: "LOGITS" } }\n' +
    '] }\n'
  );
}

function io(inName, inType, inDims, outName, outType, outDims) {
  return (
    `input [ { name: "${inName}" data_type: ${inType} dims: ${inDims} } ]\n` +
    `output [ { name: "${outName}" data_type: ${outType} dims: ${outDims} } ]\n`
  );
}




function pad(text, width) {
  return String(text).padEnd(width);
}
function verdict(ok) {
  return ok ? 'met' : 'NOT met';
}

main();
