#!/usr/bin/env node
// Validator throughput: generates a 10,000-model repository of varied configs, then prints configs/s for parsing
// alone and wall seconds for the whole `mme-deploy validate` (a separate process, as a user runs it).
// Target: the whole repository in < 1.5 s on a 2-core machine. Needs `npm run build`.
// Then a 10,000-model python repository (20,000 small files: config.pbtxt and 1/model.py each), validated beside the
// read floor: a node process that only lists the repository and reads every file, synchronously (issue 23 item 8).
// Target: validate within 1.5x of the floor. Every model.py there is the same file (a repository made from a template);
// the same repository with a different model.py in each model is timed too. Each run's CPU time (all threads, and the
// python that validate starts; Linux) gives the least wall time any spreading of its work over the cores could reach.
// Then one more run of each with every file-system call timed (bench/fs-time.js): how much of each is system calls.
'use strict';
const { spawnSync } = require('node:child_process');
const { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } = require('node:fs');
const { availableParallelism, tmpdir } = require('node:os');
const { basename, join } = require('node:path');
const { built, childrenCpuSeconds } = require('./measure');

const cli = built('bin/mme-deploy.js');
const { parseModelConfig } = require(built('lib/config/parse.js'));
const MODELS = Number(process.env.MODELS ?? 10000);

const io = (n, dtype) =>
  `input [ { name: "INPUT_${n}" data_type: ${dtype} dims: [ -1, ${3 + (n % 5)} ] } ]\n` +
  `output [ { name: "OUTPUT_${n}" data_type: TYPE_FP32 dims: [ ${1 + (n % 1000)} ] } ]\n`;
const kinds = [
  (n) => ({
    file: 'model.onnx',
    text:
      `name: "m${n}"\nbackend: "onnxruntime"\nmax_batch_size: 16\n${io(n, 'TYPE_FP32')}dynamic_batching { ` +
      'preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }\ninstance_group [ { count: 1 kind: KIND_GPU } ]\n',
  }),
  (n) => ({
    file: 'model.plan',
    text:
      `name: "m${n}"\nplatform: "tensorrt_plan"\nmax_batch_size: 128\n${io(n, 'TYPE_FP16')}model_warmup { name: "w" ` +
      `batch_size: 1 inputs { key: "INPUT_${n}" value: { data_type: TYPE_FP16 dims: [ 1, 3 ] zero_data: true } } }\n`,
  }),
  (n) => ({
    file: 'model.pt',
    text:
      `# TorchScript model\nname: "m${n}"\nplatform: "pytorch_libtorch"\nmax_batch_size: 0\n` +
      `${io(n, 'TYPE_INT64')}parameters: { key: "DISABLE_OPTIMIZED_EXECUTION" value: { string_value: "true" } }\n`,
  }),
  (n) => ({
    file: 'model.py',
    source: 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n',
    text:
      `name: 'm${n}'\nbackend: "python"\nmax_batch_size: 8\n${io(n, 'TYPE_STRING')}instance_group < kind: KIND_CPU count: 2 >\n` +
      'sequence_batching { max_sequence_idle_microseconds: 5000000 control_input [ { name: "START" ' +
      'control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }\n',
  }),
];

const repo = mkdtempSync(join(tmpdir(), 'mme-bench-validate-'));
// The ONNX models are real (validate reads each model.onnx), written by python onnx through the corpus's generator:
// one per model, each with its own tensor names.
const onnxDir = mkdtempSync(join(tmpdir(), 'mme-bench-onnx-'));
const onnxSpecs = {};
for (let n = 0; n < MODELS; n += kinds.length) {
  onnxSpecs[join(onnxDir, `${n}.onnx`)] = {
    inputs: [[`INPUT_${n}`, 'FLOAT', ['batch', 'seq', 3 + (n % 5)]]],
    outputs: [[`OUTPUT_${n}`, 'FLOAT', ['batch', 1 + (n % 1000)]]],
  };
}
const python = process.env.MME_DEPLOY_TEST_PYTHON ?? '/usr/bin/python3';
const made = spawnSync(python, [join(__dirname, '..', 'test', 'real-world', 'make_onnx.py')], {
  input: JSON.stringify(onnxSpecs),
  encoding: 'utf8',
});
if (made.status !== 0) {
  console.error(`python3 with onnx is needed to write the benchmark's ONNX models: ${made.stderr || made.error}`);
  process.exit(2);
}
// The TorchScript models are TorchScript archives as torch.jit.save lays them out (validate reads each model.pt's
// forward), written by the tests' writer: forward takes the config's one input by name.
const ptDir = mkdtempSync(join(tmpdir(), 'mme-bench-pt-'));
const ptSpecs = [];
for (let n = 0; n < MODELS; n++) {
  if (kinds[n % kinds.length](n).file === 'model.pt') ptSpecs.push([join(ptDir, `${n}.pt`), `INPUT_${n}: Tensor`]);
}
const writer = join(__dirname, '..', 'test', 'model-files', 'torchscript-writer.ts');
const wrote = spawnSync(process.execPath, ['--import', 'tsx', '-e', `const { writeFileSync, readFileSync } = require('node:fs');
  const { torchScript } = require(${JSON.stringify(writer)});
  for (const [path, forward] of JSON.parse(readFileSync(0, 'utf8'))) writeFileSync(path, torchScript({ forward }));`], {
  input: JSON.stringify(ptSpecs),
  encoding: 'utf8',
});
if (wrote.status !== 0) {
  console.error(`writing the benchmark's TorchScript models failed: ${wrote.stderr || wrote.error}`);
  process.exit(2);
}
const texts = [];
for (let n = 0; n < MODELS; n++) {
  const model = kinds[n % kinds.length](n);
  const dir = join(repo, `m${n}`);
  mkdirSync(join(dir, '1'), { recursive: true });
  writeFileSync(join(dir, 'config.pbtxt'), model.text);
  const weights =
    model.file === 'model.onnx'
      ? readFileSync(join(onnxDir, `${n}.onnx`))
      : model.file === 'model.pt'
        ? readFileSync(join(ptDir, `${n}.pt`))
        : (model.source ?? 'weights');
  writeFileSync(join(dir, '1', model.file), weights);
  texts.push(model.text);
}
rmSync(onnxDir, { recursive: true, force: true });
rmSync(ptDir, { recursive: true, force: true });
const bytes = texts.reduce((n, t) => n + t.length, 0);

// Parse alone, in this process, after one warm-up pass.
for (const t of texts.slice(0, 500)) parseModelConfig(t);
let start = process.hrtime.bigint();
for (const t of texts) parseModelConfig(t);
const parseSeconds = Number(process.hrtime.bigint() - start) / 1e9;

// The whole command, as a user runs it.
const runs = [];
for (let i = 0; i < 3; i++) {
  start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [cli, 'validate', repo, '--json'], { maxBuffer: 1 << 28 });
  runs.push(Number(process.hrtime.bigint() - start) / 1e9);
  const report = JSON.parse(result.stdout.toString());
  if (result.status !== 0 || report.models.length !== MODELS) {
    throw new Error(`validate failed: exit ${result.status}, ${report.diagnostics.slice(0, 3).map((d) => d.message).join('; ')}`);
  }
}
if (process.env.KEEP_REPO) console.log(`repository kept at ${repo}`);
else rmSync(repo, { recursive: true, force: true });
const best = Math.min(...runs);
const pythonRepo = pythonRepository();
console.log(`validate benchmark: ${MODELS} models, ${(bytes / 1024 / 1024).toFixed(1)} MiB of config.pbtxt`);
console.log(
  `  parse alone:      ${(MODELS / parseSeconds).toFixed(0)} configs/s (${(bytes / parseSeconds / 1024 / 1024).toFixed(1)} MiB/s)`,
);
console.log(`  whole validate:   ${best.toFixed(2)} s wall (best of ${runs.length}: ${runs.map((r) => r.toFixed(2)).join(', ')})`);
console.log(`  target < 1.5 s -> ${best < 1.5 ? 'met' : 'NOT met'}`);
console.log(`python repository: ${MODELS} models, ${MODELS * 2} files (config.pbtxt, 1/model.py)`);
const seconds = (runs) => runs.map((r) => r.toFixed(2)).join(', ');
console.log(`  read floor:       ${pythonRepo.floor.toFixed(2)} s wall (best of 3: ${seconds(pythonRepo.floors)})`);
console.log(`  whole validate:   ${pythonRepo.validate.toFixed(2)} s wall (best of 3: ${seconds(pythonRepo.validates)})`);
const ratio = pythonRepo.validate / pythonRepo.floor;
console.log(`  validate / floor: ${ratio.toFixed(2)}x, target <= 1.5x -> ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
// The CPU time each takes (every thread, and for validate the python it starts): with N cores, a command that needs C
// seconds of CPU cannot take less than C / N seconds of wall time, however its work is spread over threads.
if (pythonRepo.cpu.floor.length > 0) {
  const cores = availableParallelism();
  const least = (list) => Math.min(...list);
  const line = (label, list) => `${label} ${least(list).toFixed(2)} s (${seconds(list)})`;
  console.log(`  CPU time (least of 3; ${cores} cores): ${line('read floor', pythonRepo.cpu.floor)}, ` +
    `${line('validate', pythonRepo.cpu.validate)}, ${line('--no-python-syntax', pythonRepo.cpu.noSyntax)}`);
  const bound = least(pythonRepo.cpu.validate) / cores;
  console.log(`    validate cannot take less than ${bound.toFixed(2)} s of wall time here, all ${cores} cores busy: ` +
    `${(bound / pythonRepo.floor).toFixed(2)}x the read floor`);
}
// Where the time goes: the file-system calls (node's wrappers included) against the rest (JavaScript, garbage
// collection, waiting for the syntax check's python), from one more run of each with every call timed.
console.log('  where the time goes (one more run each, every file-system call timed by bench/fs-time.js):');
for (const [label, split] of Object.entries(pythonRepo.splits)) {
  const rest = split.totalSeconds - split.fsSeconds;
  console.log(`    ${label.padEnd(21)} ${split.fsSeconds.toFixed(2)} s in file-system calls, ${rest.toFixed(2)} s the rest ` +
    `(${split.totalSeconds.toFixed(2)} s from the preload to exit; node's own start-up comes before)`);
}
// The model.py syntax check (on by default) streams every model.py to one python3 process, which parses while validate
// reads and checks the models: what it adds beyond that overlap, apart.
const checkOff = pythonRepo.validateNoSyntax / pythonRepo.floor;
console.log(`  --no-python-syntax: ${pythonRepo.validateNoSyntax.toFixed(2)} s wall (best of 3: ${seconds(pythonRepo.noSyntax)}), ` +
  `${checkOff.toFixed(2)}x the floor; the syntax check adds ${(pythonRepo.validate - pythonRepo.validateNoSyntax).toFixed(2)} s`);
const distinctRatio = pythonRepo.validateDistinct / pythonRepo.distinctFloor;
console.log(`  each model.py different: read floor ${pythonRepo.distinctFloor.toFixed(2)} s ` +
  `(best of 3: ${seconds(pythonRepo.distinctFloors)}), validate ${pythonRepo.validateDistinct.toFixed(2)} s ` +
  `(best of 3: ${seconds(pythonRepo.distinct)}), ${distinctRatio.toFixed(2)}x`);

/** Writes the python repository, times the read floor and validate (each best of 3, alternated), then removes it. */
function pythonRepository() {
  const root = mkdtempSync(join(tmpdir(), 'mme-bench-python-'));
  const source = 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n';
  for (let n = 0; n < MODELS; n++) {
    mkdirSync(join(root, `p${n}`, '1'), { recursive: true });
    writeFileSync(join(root, `p${n}`, 'config.pbtxt'), kinds[3](n).text.replace(`'m${n}'`, `'p${n}'`));
    writeFileSync(join(root, `p${n}`, '1', 'model.py'), source);
  }
  // What node needs just to read the files: list each directory and read each file, nothing else.
  const floorScript = `
    const { readdirSync, readFileSync } = require('node:fs');
    const { join } = require('node:path');
    const walk = (dir) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(join(dir, entry.name));
        else readFileSync(join(dir, entry.name));
      }
    };
    walk(process.argv[1]);`;
  // Each run's CPU time too (all its threads, and the python it starts), into `cpu` when given.
  const time = (args, env = process.env, cpu = undefined) => {
    const cpuBefore = childrenCpuSeconds();
    const begin = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { env, maxBuffer: 1 << 28 });
    const wall = Number(process.hrtime.bigint() - begin) / 1e9;
    if (result.status !== 0) throw new Error(`${args.join(' ')} failed: exit ${result.status}, ${result.stderr}`);
    const cpuAfter = childrenCpuSeconds();
    if (cpu !== undefined && cpuBefore !== undefined && cpuAfter !== undefined) cpu.push(cpuAfter - cpuBefore);
    return wall;
  };
  const floors = [];
  const validates = [];
  const noSyntax = [];
  const cpu = { floor: [], validate: [], noSyntax: [] };
  for (let i = 0; i < 3; i++) {
    floors.push(time(['-e', floorScript, root], process.env, cpu.floor));
    validates.push(time([cli, 'validate', root, '--json'], process.env, cpu.validate));
    noSyntax.push(time([cli, 'validate', root, '--json', '--no-python-syntax'], process.env, cpu.noSyntax));
  }
  // A run of `node args` with bench/fs-time.js preloaded: its time in file-system calls and in all.
  const timedCalls = (args) => {
    const file = join(root, '..', `${basename(root)}-fs-time.json`);
    try {
      time(['-r', join(__dirname, 'fs-time.js'), ...args], { ...process.env, MME_BENCH_FS_TIME: file });
      return JSON.parse(readFileSync(file, 'utf8'));
    } finally {
      rmSync(file, { force: true });
    }
  };
  const splits = {
    'read floor:': timedCalls(['-e', floorScript, root]),
    'validate:': timedCalls([cli, 'validate', root, '--json']),
    '--no-python-syntax:': timedCalls([cli, 'validate', root, '--json', '--no-python-syntax']),
  };
  // The same repository with a different model.py in each model: python parses each one (it parses one source once
  // however many models hold it, as a repository made from a template does above).
  for (let n = 0; n < MODELS; n++) writeFileSync(join(root, `p${n}`, '1', 'model.py'), `# model ${n}\n${source}`);
  const distinctFloors = [];
  const distinct = [];
  for (let i = 0; i < 3; i++) {
    distinctFloors.push(time(['-e', floorScript, root]));
    distinct.push(time([cli, 'validate', root, '--json']));
  }
  rmSync(root, { recursive: true, force: true });
  const best = (list) => Math.min(...list);
  return {
    floors, validates, noSyntax, distinctFloors, distinct, splits, cpu,
    floor: best(floors), validate: best(validates), validateNoSyntax: best(noSyntax),
    distinctFloor: best(distinctFloors), validateDistinct: best(distinct),
  };
}
