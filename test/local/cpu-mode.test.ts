// `local load --cpu`'s rules on extracted archives: which instance groups are rewritten (and how the text changes),
// which models are refused, and what is only said.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseModelConfig } from '../../lib/config/parse';
import { planCpuStaging } from '../../lib/local/cpu-mode';
import { discoverModels } from '../../lib/repository/discover';
import { validateRepository } from '../../lib/repository/validate';
import { daliPipelineBytes } from '../model-files/dali-writer';
import { testFor } from '../tools';

let work: string;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'mme-cpu-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

function repository(files: Record<string, string | Buffer>): string {
  const root = join(work, 'repo');
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(join(full, '..'), { recursive: true });
    if (path.endsWith('/')) mkdirSync(full, { recursive: true });
    else writeFileSync(full, content);
  }
  return root;
}

const IO = `max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] } ]
`;

function ensembleOf(...steps: string[]): string {
  const stepText = steps
    .map((s, i) => {
      const input = i === 0 ? 'x' : `t${i}`;
      const output = i === steps.length - 1 ? 'y' : `t${i + 1}`;
      return `{ model_name: "${s}" model_version: -1 input_map { key: "x" value: "${input}" } output_map { key: "y" value: "${output}" } }`;
    })
    .join(',\n    ');
  return `name: "ensemble"\nplatform: "ensemble"\n${IO}ensemble_scheduling {\n  step [\n    ${stepText}\n  ]\n}\n`;
}

const PYTHON_GPU = `name: "pre"
backend: "python"
${IO}# two GPUs on the endpoint
instance_group [ { kind: KIND_GPU gpus: [ 0, 1 ] count: 1 } ]
`;
const ONNX_GPU = `name: "classifier"
backend: "onnxruntime"
${IO}instance_group [
  {
    name: "gpu_group"
    kind: KIND_GPU  # keep on the GPU
    count: 2
  },
  { kind: KIND_CPU count: 1 }
]
`;

function plan(root: string) {
  return planCpuStaging(discoverModels(root));
}

describe('local --cpu: instance groups', () => {
  it('rewrites every KIND_GPU group to KIND_CPU, drops its gpus, keeps the comments, and warns once per model', () => {
    const root = repository({
      'ensemble/config.pbtxt': ensembleOf('pre', 'classifier'),
      'ensemble/1/': '',
      'pre/config.pbtxt': PYTHON_GPU,
      'pre/1/model.py': 'import numpy\n',
      'classifier/config.pbtxt': ONNX_GPU,
      'classifier/1/model.onnx': '',
    });
    const result = plan(root);
    const warnings = result.diagnostics.filter((d) => d.code === 'cpu-mode-rewritten');
    expect(warnings.map((d) => d.model).sort()).toEqual(['classifier', 'pre']);
    expect(warnings.map((d) => `${d.file}:${d.line}`).sort()).toEqual(['classifier/config.pbtxt:6', 'pre/config.pbtxt:7']);
    const pre = warnings.find((d) => d.model === 'pre')!;
    expect(pre.message).toBe(
      "'pre' rewritten for CPU in the staged copy (the archive is unchanged): 'pre_0' KIND_GPU -> KIND_CPU, gpus [0, 1] removed; " +
        'model.py now runs on a CPU instance, so code that calls CUDA itself fails.',
    );
    expect(warnings.find((d) => d.model === 'classifier')!.message).toContain("'gpu_group' KIND_GPU -> KIND_CPU.");
    for (const d of result.diagnostics) expect(d.message).not.toContain('\n');

    const texts = new Map(result.rewrites.map((r) => [r.model, r.text]));
    expect(texts.get('pre')).toBe(PYTHON_GPU.replace('kind: KIND_GPU gpus: [ 0, 1 ] count: 1', 'kind: KIND_CPU count: 1'));
    expect(texts.get('classifier')).toBe(ONNX_GPU.replace('kind: KIND_GPU  # keep', 'kind: KIND_CPU  # keep'));
    expect(parseModelConfig(texts.get('classifier')!).config.instance_group).toEqual([
      { name: 'gpu_group', kind: 'KIND_CPU', count: 2 },
      { kind: 'KIND_CPU', count: 1 },
    ]);
    expect(result.rewrites.find((r) => r.model === 'pre')!.path).toBe(join(root, 'pre', 'config.pbtxt'));
  });

  it('leaves KIND_AUTO and a missing instance_group to Triton, which makes them KIND_CPU without a GPU, but drops gpus', () => {
    const root = repository({
      'ensemble/config.pbtxt': ensembleOf('auto', 'none', 'listed'),
      'ensemble/1/': '',
      'auto/config.pbtxt': `name: "auto"\nbackend: "python"\n${IO}instance_group [ { kind: KIND_AUTO count: 1 } ]\n`,
      'auto/1/model.py': '',
      'none/config.pbtxt': `name: "none"\nbackend: "python"\n${IO}`,
      'none/1/model.py': '',
      'listed/config.pbtxt': `name: "listed"\nbackend: "python"\n${IO}instance_group [ { count: 1 gpus: [ 0 ] } ]\n`,
      'listed/1/model.py': '',
    });
    const result = plan(root);
    expect(result.rewrites.map((r) => r.model)).toEqual(['listed']);
    expect(result.rewrites[0]!.text).toContain('instance_group [ { count: 1 } ]');
    expect(result.diagnostics.map((d) => `${d.model} ${d.code}`)).toEqual(['listed cpu-mode-rewritten']);
    expect(result.diagnostics[0]!.message).toContain("'listed_0' KIND_AUTO (KIND_CPU without a GPU), gpus [0] removed");
  });

  it('leaves a KIND_MODEL group to its backend and says so', () => {
    const root = repository({
      'm/config.pbtxt': `name: "m"\nbackend: "python"\n${IO}instance_group [ { kind: KIND_MODEL } ]\n`,
      'm/1/model.py': '',
    });
    const result = plan(root);
    expect(result.rewrites).toEqual([]);
    expect(result.diagnostics).toMatchObject([{ severity: 'warning', code: 'cpu-mode-kind-model', model: 'm' }]);
  });

  it('removes use_growable_memory, which Triton allows on KIND_GPU instances only', () => {
    const config =
      `name: "seq"\nbackend: "onnxruntime"\n${IO}instance_group [ { kind: KIND_GPU } ]\n` +
      'sequence_batching {\n  state [\n    {\n      input_name: "s_in"\n      output_name: "s_out"\n      data_type: TYPE_FP32\n' +
      '      dims: [ 4 ]\n      use_same_buffer_for_input_output: true\n      use_growable_memory: true\n    }\n  ]\n}\n';
    const root = repository({ 'seq/config.pbtxt': config, 'seq/1/model.onnx': '' });
    const result = plan(root);
    const text = result.rewrites[0]!.text;
    expect(text).not.toContain('use_growable_memory');
    expect(text).toContain('      use_same_buffer_for_input_output: true\n    }');
    expect(result.diagnostics[0]!.message).toContain("use_growable_memory removed from state 's_in' (KIND_GPU only)");
  });

  it('leaves an ONNX gpu_execution_accelerator in place, which CPU instances ignore, and says it is not tried', () => {
    const config =
      `name: "ort"\nbackend: "onnxruntime"\n${IO}instance_group [ { kind: KIND_GPU } ]\n` +
      'optimization { execution_accelerators { gpu_execution_accelerator [ { name: "tensorrt" } ] } }\n';
    const result = plan(repository({ 'ort/config.pbtxt': config, 'ort/1/model.onnx': '' }));
    expect(result.rewrites[0]!.text).toContain('gpu_execution_accelerator [ { name: "tensorrt" } ]');
    expect(result.diagnostics.map((d) => d.code).sort()).toEqual(['cpu-mode-gpu-accelerator', 'cpu-mode-rewritten']);
    expect(result.diagnostics.find((d) => d.code === 'cpu-mode-gpu-accelerator')!.message).toContain('tensorrt is ignored by CPU');
  });

  it('gives configs that the validator still accepts, where changing the kind alone would not', async () => {
    const model = 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n';
    const root = repository({
      'ensemble/config.pbtxt': ensembleOf('pre', 'classifier'),
      'ensemble/1/': '',
      'pre/config.pbtxt': PYTHON_GPU,
      'pre/1/model.py': model,
      'classifier/config.pbtxt': ONNX_GPU.replace('backend: "onnxruntime"', 'backend: "python"'),
      'classifier/1/model.py': model,
    });
    const errors = async () => (await validateRepository(root, { mme: true })).diagnostics.filter((d) => d.severity === 'error');
    expect(await errors()).toEqual([]);
    const rewrites = plan(root).rewrites;
    expect(rewrites).toHaveLength(2);

    // The kind alone: Triton refuses KIND_CPU with gpus (model_config_utils.cc ValidateInstanceGroup), as the validator does.
    writeFileSync(join(root, 'pre', 'config.pbtxt'), PYTHON_GPU.replace('KIND_GPU', 'KIND_CPU'));
    expect((await errors()).map((d) => d.message).join('\n')).toContain('has kind KIND_CPU but specifies one or more GPUs');

    for (const rewrite of rewrites) writeFileSync(rewrite.path, rewrite.text);
    expect(await errors()).toEqual([]);
  });
});

describe('local --cpu: models that need a GPU', () => {
  it.each([['platform: "tensorrt_plan"'], ['backend: "tensorrt"']])('refuses a TensorRT model (%s), rewriting nothing', (line) => {
    const root = repository({
      'ensemble/config.pbtxt': ensembleOf('pre', 'trt'),
      'ensemble/1/': '',
      'pre/config.pbtxt': PYTHON_GPU,
      'pre/1/model.py': '',
      'trt/config.pbtxt': `name: "trt"\n${line}\n${IO}instance_group [ { kind: KIND_GPU } ]\n`,
      'trt/1/model.plan': 'engine',
    });
    const result = plan(root);
    expect(result.rewrites).toEqual([]);
    // Nothing is staged, so 'pre' (KIND_GPU too) is not said to be rewritten.
    expect(result.diagnostics.map((d) => d.code)).toEqual(['cpu-mode-gpu-only']);
    const refusal = result.diagnostics[0]!;
    expect(refusal).toMatchObject({ code: 'cpu-mode-gpu-only', model: 'trt', file: 'trt/config.pbtxt', line: 2 });
    expect(refusal.message).toMatch(/^'trt' is a TensorRT plan, which runs only on a GPU .*"TensorRT backend supports only GPU device"/);
  });

  it('refuses a model whose config.pbtxt does not parse but asks for a GPU: it cannot be rewritten', () => {
    const config = `name: "m"\nbackend: "python"\n${IO}instance_group [ { kind: KIND_GPU } ]\nmax_batch_sise: 4\n`;
    const result = plan(repository({ 'm/config.pbtxt': config, 'm/1/model.py': '' }));
    expect(result.rewrites).toEqual([]);
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'cpu-mode-config-unreadable', model: 'm' }]);
  });

  it('refuses a TensorRT plan Triton finds without a config.pbtxt (auto-complete from model.plan)', () => {
    const result = plan(repository({ 'trt/1/model.plan': 'engine' }));
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'cpu-mode-gpu-only', model: 'trt' }]);
  });

  it('ignores a TensorRT model the archive holds but SageMaker never loads (no step of the ensemble)', () => {
    const root = repository({
      'ensemble/config.pbtxt': ensembleOf('pre'),
      'ensemble/1/': '',
      'pre/config.pbtxt': PYTHON_GPU,
      'pre/1/model.py': '',
      'spare/config.pbtxt': `name: "spare"\nplatform: "tensorrt_plan"\n${IO}`,
      'spare/1/model.plan': 'engine',
    });
    const result = plan(root);
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(result.rewrites.map((r) => r.model)).toEqual(['pre']);
  });

  const withProtoc = testFor({ tools: ['protoc'] });
  const DALI = `name: "dali"\nbackend: "dali"\n${IO}`;

  withProtoc('refuses a DALI pipeline with "mixed" or "gpu" operators, naming them', () => {
    const bytes = daliPipelineBytes(
      [
        { name: 'ExternalSource', device: 'cpu', outputs: ['cpu'] },
        { name: 'decoders__Image', device: 'mixed', outputs: ['gpu'] },
        { name: 'Resize', device: 'gpu', outputs: ['gpu'] },
      ],
      'protoc',
    );
    const result = plan(repository({ 'dali/config.pbtxt': DALI, 'dali/1/model.dali': bytes }));
    expect(result.rewrites).toEqual([]);
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ severity: 'error', code: 'cpu-mode-gpu-only', model: 'dali' });
    expect(result.diagnostics[0]!.message).toContain(
      "'dali' is a DALI pipeline with GPU operators in dali/1/model.dali: decoders__Image (mixed), Resize (gpu);",
    );
  });

  withProtoc('loads a DALI pipeline whose operators all run on the CPU, rewriting its group', () => {
    const bytes = daliPipelineBytes([{ name: 'ExternalSource', device: 'cpu', outputs: ['cpu'] }], 'protoc');
    const config = `${DALI}instance_group [ { kind: KIND_GPU } ]\n`;
    const result = plan(repository({ 'dali/config.pbtxt': config, 'dali/1/model.dali': bytes }));
    expect(result.diagnostics.map((d) => d.code)).toEqual(['cpu-mode-rewritten']);
    expect(result.rewrites).toHaveLength(1);
  });

  it('warns, and does not refuse, when the DALI pipeline is Python that only DALI can run', () => {
    const result = plan(repository({ 'dali/config.pbtxt': DALI, 'dali/1/dali.py': 'import nvidia.dali\n' }));
    expect(result.diagnostics).toMatchObject([{ severity: 'warning', code: 'cpu-mode-dali-unknown', model: 'dali' }]);
    expect(result.diagnostics[0]!.message).toContain('its pipeline is Python (dali.py)');
  });

  it('says nothing of a DALI model without a pipeline file: the validator reports the missing file', () => {
    expect(plan(repository({ 'dali/config.pbtxt': DALI, 'dali/1/': '' })).diagnostics).toEqual([]);
  });
});
