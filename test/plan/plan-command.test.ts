import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../lib/cli/io';
import { main } from '../../lib/cli/program';

let dir: string;

/** Writes a model repository: `files` maps relative paths to text, or to a size for a sparse weight file. */
function repository(name: string, files: Record<string, string | number>): string {
  const root = join(dir, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    if (typeof content === 'number') {
      writeFileSync(join(root, path), '');
      truncateSync(join(root, path), content);
    } else {
      writeFileSync(join(root, path), content);
    }
  }
  return root;
}

/** Packs a repository the way AWS's notebooks do: `tar -C repo -czf name.tar.gz .`. */
function archive(repo: string, name: string): string {
  const path = join(dir, name);
  execFileSync('tar', ['-C', repo, '-czf', path, '.']);
  return path;
}

/** `mme-deploy plan ARGS` as program.ts runs it (commander's parsing, errors reported with their exit codes). */
async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), isTTY: false, env: {}, cwd: dir };
  const code = await main(['plan', ...args], io);
  return { code, stdout, stderr };
}

let tfDali: string;
let trtPython: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-plan-'));
  // The seed's two ensembles, with small stand-ins for the weights.
  const dali = repository('tf_dali', {
    'ensemble_dali_inception/config.pbtxt': 'name: "ensemble_dali_inception"\nplatform: "ensemble"\n',
    'ensemble_dali_inception/1/README.md': 'Do not delete me!',
    'dali/config.pbtxt': 'name: "dali"\nbackend: "dali"\nmax_batch_size: 256\n',
    'dali/1/model.dali': 20_000,
    'inception_graphdef/config.pbtxt':
      'name: "inception_graphdef"\nplatform: "tensorflow_graphdef"\ninstance_group [ { kind: KIND_GPU } ]\n',
    'inception_graphdef/1/model.graphdef': 2_000_000,
  });
  const python = repository('trt_python', {
    'ensemble/config.pbtxt': 'name: "ensemble"\nplatform: "ensemble"\n',
    'ensemble/1/README.md': 'Do not delete me!',
    'bert-trt/config.pbtxt': 'name: "bert-trt"\nplatform: "tensorrt_plan"\n',
    'bert-trt/1/model.plan': 1_000_000,
    'preprocess/config.pbtxt': 'name: "preprocess"\nbackend: "python"\ninstance_group [ { kind: KIND_CPU } ]\n',
    'preprocess/1/model.py': 'import numpy\n',
  });
  tfDali = archive(dali, 'model_tf_dali.tar.gz');
  trtPython = archive(python, 'model_trt_python.tar.gz');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mme-deploy plan', () => {
  it('is registered with its options in the command grammar', async () => {
    let out = '';
    const io: CliIo = { stdout: (s) => void (out += s), stderr: () => undefined, isTTY: false, env: {}, cwd: dir };
    expect(await main(['plan', '--help'], io)).toBe(0);
    const flags = [
      '--instance-type', '--instances', '--region', '--price', '--traffic', '--rps', '--requests', '--seed', '--memory',
      '--gpu-reserve', '--disk-gb', '--cold-start', '--csv', '--json', '--force',
    ];
    for (const flag of flags) expect(out).toContain(flag);
  });

  it('reproduces the seed\'s saving for its two ensembles on one ml.g4dn.4xlarge in us-east-1', async () => {
    const result = await run([tfDali, trtPython, '--instance-type', 'ml.g4dn.4xlarge', '--region', 'us-east-1', '--json']);
    expect(result.code).toBe(0);
    const { ok, report } = JSON.parse(result.stdout);
    expect(ok).toBe(true);
    expect(report.cost.savingPercent).toBe(50);
    expect(report.cost.savingPerYearUsd).toBeCloseTo(1.505 * 8760, 2);
    expect(report.models.map((m: { name: string }) => m.name)).toEqual(['model_tf_dali.tar.gz', 'model_trt_python.tar.gz']);
    const parts = report.models[0].parts.map((p: { model: string; backend: string }) => `${p.model}:${p.backend}`);
    expect(parts).toEqual(['dali:dali', 'ensemble_dali_inception:ensemble', 'inception_graphdef:tensorflow']);
    expect(report.simulation.curve).toHaveLength(1);
  });

  it('prints a table with the saving, the simulation and the assumptions', async () => {
    const result = await run([tfDali, trtPython, '--instance-type', 'g4dn.4xlarge', '--traffic', 'zipf:1.2']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/saving 50 %\s+\$1,098\.65\s+\$13,183\.80/);
    expect(result.stdout).toMatch(/Cache simulation: zipf:1\.2 traffic/);
    expect(result.stdout).toContain('Assumptions');
    // The TensorFlow model's memory is not returned on unload: said once, on stderr.
    expect(result.stderr).toContain('warning: ');
    expect(result.stderr).toContain('TensorFlow backend');
  });

  it('reads a model repository directory as one TargetModel', async () => {
    const repo = repository('onnx_repo', {
      'classifier/config.pbtxt': 'name: "classifier"\nbackend: "onnxruntime"\ninstance_group [ { count: 2 } ]\n',
      'classifier/1/model.onnx': 8 * 1024 * 1024,
    });
    const result = await run([repo, '--json']);
    const { report } = JSON.parse(result.stdout);
    expect(report.models[0]).toMatchObject({ name: 'onnx_repo', kind: 'repository', archiveBytesEstimated: true });
    expect(report.models[0].gpuBytes).toBe(2 * 8 * 1024 * 1024 * 1.25 + 2 * 256 * 1024 * 1024);
  });

  it('fails with exit 1 naming a model whose weights do not fit in the GPU', async () => {
    const huge = repository('huge_model', {
      'llm/config.pbtxt': 'name: "llm"\nplatform: "pytorch_libtorch"\n',
      'llm/1/model.pt': 14 * 1024 ** 3,
    });
    const result = await run([tfDali, huge]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/error: .*huge_model needs 17\.8 GiB of GPU memory \(llm pytorch 17\.8 GiB\)/);
    expect(result.stdout).toMatch(/huge_model .* NO/);
  });

  it('writes the instance-count curve as CSV and never overwrites an existing file without --force', async () => {
    const args = [tfDali, trtPython, '--instances', '3', '--csv', 'curve.csv'];
    expect((await run(args)).code).toBe(0);
    const csv = readFileSync(join(dir, 'curve.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toMatch(/^instances,hit_ratio,loads_per_hour,/);
    expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(['1', '2', '3']);

    writeFileSync(join(dir, 'curve.csv'), 'mine');
    const again = await run(args);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('--force');
    expect(readFileSync(join(dir, 'curve.csv'), 'utf8')).toBe('mine');
    expect((await run([...args, '--force'])).code).toBe(0);
  });

  it('prints the same report for the same --seed', async () => {
    const args = [
      tfDali,
      trtPython,
      '--traffic',
      'zipf:1',
      '--rps',
      '500',
      '--memory',
      'model_tf_dali.tar.gz=9',
      '--memory',
      'model_trt_python.tar.gz=9',
      '--instances',
      '2',
      '--requests',
      '50000',
      '--json',
    ];
    const first = await run([...args, '--seed', '7']);
    const second = await run([...args, '--seed', '7']);
    const other = await run([...args, '--seed', '8']);
    expect(first.stdout).toBe(second.stdout);
    expect(JSON.parse(first.stdout).report.simulation.curve).not.toEqual(JSON.parse(other.stdout).report.simulation.curve);
  });

  it('replays a timestamp,model trace and names unknown models in it', async () => {
    writeFileSync(join(dir, 'trace.csv'), 'timestamp,model\n0,model_tf_dali.tar.gz\n30,model_trt_python.tar.gz\n60,model_tf_dali.tar.gz\n');
    const ok = await run([tfDali, trtPython, '--traffic', 'trace.csv', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).report.simulation.requests).toBe(3);
    writeFileSync(join(dir, 'typo.csv'), 'timestamp,model\n0,model_tf_dal.tar.gz\n');
    const typo = await run([tfDali, trtPython, '--traffic', 'typo.csv']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('model_tf_dal.tar.gz');
  });

  it('answers usage and I/O problems with exit 2 and a message, never a stack trace', async () => {
    const missing = await run(['nowhere.tar.gz']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nowhere\.tar\.gz: no such file or directory/);
    for (const [flag, value] of [
      ['--instances', '0'],
      ['--rps', 'fast'],
      ['--memory', 'model_tf_dali.tar.gz'],
      ['--traffic', 'zipf:x'],
      ['--cold-start', 'download=0'],
    ]) {
      const result = await run([tfDali, flag!, value!]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(flag!);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('shows the usable GPU memory and its source, in the text report and in --json', async () => {
    const text = await run([tfDali, trtPython]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('of GPU memory for models (15,109 MiB usable - 1024 MiB reserved)');
    expect(text.stdout).toContain(
      'Usable GPU memory 15,109 MiB per NVIDIA T4, not the nominal 16.0 GiB: CUDA total on a g4dn, 14.76 GiB ' +
        '(github.com/Tianxiaomo/pytorch-YOLOv4/issues/452).',
    );
    const json = JSON.parse((await run([tfDali, '--instance-type', 'ml.g5.2xlarge', '--json'])).stdout);
    expect(json.report.capacity).toMatchObject({ gpuMemoryMiB: 24_576, gpuUsableMiB: 22_727, modelGpuMiB: 21_703 });
    expect(json.report.capacity.gpuUsableSource).toContain('SageMaker SDK table says 22,888 MiB');
  });

  it('requires --price where the catalog has no price, in one line naming the flag, before reading any archive', async () => {
    for (const args of [
      [tfDali, '--region', 'eu-west-1'],
      [tfDali, '--region', 'us-east-2', '--instance-type', 'ml.g4dn.xlarge'],
      [tfDali, '--instance-type', 'ml.p2.xlarge'],
      // The archive is not even opened: the refusal comes first.
      ['nowhere.tar.gz', '--region', 'ap-south-1'],
    ]) {
      const result = await run(args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trim().split('\n');
      expect(lines).toEqual([expect.stringMatching(/^mme-deploy: .*no on-demand price for ml\.\S+ in \S+ .*--price/)]);
      expect(result.stderr).not.toContain('nowhere');
    }
    const json = await run([tfDali, '--region', 'ap-south-1', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error).toEqual({
      code: 'USAGE',
      message:
        'no on-demand price for ml.g4dn.xlarge in ap-south-1 in the catalog (it has one in us-east-1 only); ' +
        'pass your price per instance-hour in USD with --price, e.g. from https://aws.amazon.com/sagemaker/pricing/',
    });
    const region = await run([tfDali, trtPython, '--region', 'eu-west-1', '--price', '0.9', '--json']);
    expect(region.code).toBe(0);
    expect(JSON.parse(region.stdout).report.price).toEqual({ hourlyUsd: 0.9, source: '--price' });
    // AWS_REGION chooses the price's region too.
    let stderr = '';
    const env = { AWS_REGION: 'eu-west-2' };
    const io: CliIo = { stdout: () => undefined, stderr: (s) => void (stderr += s), isTTY: false, env, cwd: dir };
    expect(await main(['plan', tfDali], io)).toBe(2);
    expect(stderr).toContain('in eu-west-2');
  });

  it('refuses g6 with exit 2 because AWS does not list it for GPU MMEs', async () => {
    const result = await run([tfDali, '--instance-type', 'g6.xlarge', '--price', '1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "ml.g6.xlarge (1 × NVIDIA L4) is not in AWS's list of GPU instance types for multi-model endpoints " +
        '(https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-support.html); choose one of ml.g4dn.xlarge',
    );
    expect(result.stderr).not.toContain('single-GPU');
  });

  it('rejects a file that is not a tar.gz archive', async () => {
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    const result = await run([join(dir, 'notes.txt')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/notes\.txt/);
  });
});
