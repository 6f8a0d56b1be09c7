// The seeds' repositories under examples/: their configs are the seeds' own, and with stand-ins for the weights
// their generate scripts produce, each validates clean, as a plain Triton repository and as an MME archive.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { validateRepository } from '../../lib/repository/validate';
import { EXAMPLES_DIR, SEED_EXAMPLES, copyWithStandIns, readConfig } from './example-repositories';
import { itWithTools } from '../tools';

const copies: string[] = [];
afterAll(() => {
  for (const copy of copies) rmSync(dirname(copy), { recursive: true, force: true });
});

function describeProblems(diagnostics: { severity: string; code: string; message: string; file: string }[]): string {
  return diagnostics.map((d) => `${d.severity} ${d.code} ${d.file}: ${d.message}`).join('\n');
}

/** Per example: a config edit Triton refuses because the model file does not have the tensor, and its wording. */
const MODEL_FILE_MISTAKES: Record<string, [string, string, string, string, string][]> = {
  ensemble_dali_inception: [
    ['an input the GraphDef has no Placeholder for', 'inception_graphdef', 'name: "input"', 'name: "inputt"',
      "unexpected inference input 'inputt', allowed inputs are: input"],
    ['an output the GraphDef has no node for', 'inception_graphdef',
      'InceptionV3/Predictions/Softmax"', 'InceptionV3/Predictions/Softmax:0"',
      "unexpected inference output 'InceptionV3/Predictions/Softmax:0'"],
    ['an input the DALI pipeline has no external source for', 'dali', 'name: "DALI_INPUT_0"', 'name: "DALI_INPUT"',
      'Configuration file contains config for DALI_INPUT but such input is not present in the pipeline.'],
    ['an input type neither the config nor the pipeline gives', 'dali', 'data_type: TYPE_UINT8', '',
      'Missing data_type config for "DALI_INPUT_0"'],
    ['more outputs than the pipeline returns', 'dali', 'dims: [ 299, 299, 3 ]\n  }',
      'dims: [ 299, 299, 3 ]\n  },\n  { name: "DALI_OUTPUT_1" data_type: TYPE_FP32 dims: [ 1 ] }',
      'The number of outputs specified in the DALI pipeline and the configuration file do not match. Model config outputs: 2.'],
  ],
  resnet_pytorch: [
    ['an input forward does not take', 'resnet', 'output {', 'input { name: "INPUT__1" data_type: TYPE_FP32 dims: 1 }\noutput {',
      "unable to load model 'resnet', configuration expects 2 inputs, model provides 1"],
  ],
};

describe.each(Object.entries(SEED_EXAMPLES))('seed example %s', (example, { models, generated }) => {
  let copy: string;
  beforeAll(() => {
    copy = copyWithStandIns(example);
    copies.push(copy);
  });

  it.each([
    ['as a Triton repository', {}],
    ['as an MME archive', { mme: true }],
  ])('validates clean %s once its generated files exist', async (_mode, options) => {
    const report = await validateRepository(copy, options);
    // An MME archive's TensorRT plans always get one warning: the engine must match the endpoint's GPU and TensorRT.
    const problems = report.diagnostics.filter(
      (d) => (d.severity === 'error' || d.severity === 'warning') && d.code !== 'tensorrt-plan-target',
    );
    expect(describeProblems(problems)).toBe('');
    expect(report.ok).toBe(true);
    expect(report.models.map((m) => m.name).sort()).toEqual(models);
    for (const model of report.models) expect(model.versions).toEqual([1]);
  });

  const mistakes = MODEL_FILE_MISTAKES[example] ?? [];
  (mistakes.length ? it.each(mistakes) : () => () => undefined)(
    'checks its config against its model file: refuses %s',
    async (_what, model, from, to, wording) => {
      const file = join(copy, model, 'config.pbtxt');
      const original = readFileSync(file, 'utf8');
      try {
        writeFileSync(file, original.replace(from, to));
        const report = await validateRepository(copy);
        expect(report.ok).toBe(false);
        const errors = report.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
        expect(errors).toContainEqual(expect.stringContaining(wording));
      } finally {
        writeFileSync(file, original);
      }
    },
  );

  it('commits none of its generated files and ignores every one of them in git', () => {
    const ignored = readFileSync(join(EXAMPLES_DIR, '.gitignore'), 'utf8').split('\n');
    for (const file of generated) {
      expect(existsSync(join(EXAMPLES_DIR, example, file))).toBe(false);
      expect(ignored).toContain(`/${example}/${file}`);
    }
  });

  it('has a README that names the script producing each generated file', () => {
    const readme = readFileSync(join(EXAMPLES_DIR, example, 'README.md'), 'utf8');
    const script = ['generate_models.sh', 'generate_model.sh'].find((s) => existsSync(join(EXAMPLES_DIR, example, s)));
    expect(script).toBeDefined();
    expect(readme).toContain(script!);
    for (const file of generated) expect(readme).toContain(file);
  });
});

describe('the resnet_pytorch example against a model.pt torch.jit.save writes', () => {
  // export_torchscript.py traces torchvision's ResNet-50 on one [1,3,224,224] example: a traced module's forward takes
  // the one tensor. A small module traced the same way has that interface without torchvision or the weights.
  const title = "validates clean, and refuses an input forward does not take in the backend's words";
  itWithTools(title, { python: ['torch'] }, async (found) => {
    const copy = copyWithStandIns('resnet_pytorch');
    copies.push(copy);
    const script = `
import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(3, 1000)
    def forward(self, x):
        return self.fc(torch.flatten(self.pool(x), 1))
torch.jit.trace(Net().eval(), torch.randn(1, 3, 224, 224)).save(sys.argv[1])
`;
    writeFileSync(join(dirname(copy), 'export.py'), script);
    const run = spawnSync(found.python!, [join(dirname(copy), 'export.py'), join(copy, 'resnet', '1', 'model.pt')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (run.status !== 0) throw new Error(run.stderr);
    const report = await validateRepository(copy);
    expect(describeProblems(report.diagnostics)).toBe('');
    const config = join(copy, 'resnet', 'config.pbtxt');
    const extraInput = 'input { name: "INPUT__1" data_type: TYPE_FP32 dims: 1 }\noutput {';
    writeFileSync(config, readFileSync(config, 'utf8').replace('output {', extraInput));
    const refused = await validateRepository(copy);
    expect(refused.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message)).toContainEqual(
      expect.stringContaining("unable to load model 'resnet', configuration expects 2 inputs, model provides 1"),
    );
  }, 180_000);
});

// The configs exactly as the seeds give them: seed 000 (and the AWS sample it points to) for the two ensembles,
// seed 004 for the ResNet-50 models. Dims and versions are 64-bit fields, so bigints.
const SEED_CONFIGS: Record<string, Record<string, unknown>> = {
  'ensemble_hf/ensemble': {
    name: 'ensemble',
    platform: 'ensemble',
    max_batch_size: 16,
    input: [{ name: 'INPUT0', data_type: 'TYPE_STRING', dims: [1n] }],
    output: [{ name: 'finaloutput', data_type: 'TYPE_FP32', dims: [384n] }],
    ensemble_scheduling: {
      step: [
        {
          model_name: 'preprocess',
          model_version: -1n,
          input_map: { INPUT0: 'INPUT0' },
          output_map: { OUTPUT0: 'token_ids', OUTPUT1: 'attn_mask' },
        },
        {
          model_name: 'bert-trt',
          model_version: -1n,
          input_map: { token_ids: 'token_ids', attn_mask: 'attn_mask' },
          output_map: { output: 'output' },
        },
        {
          model_name: 'postprocess',
          model_version: -1n,
          input_map: { TOKEN_EMBEDS_POST: 'output', ATTENTION_POST: 'attn_mask' },
          output_map: { SENT_EMBED: 'finaloutput' },
        },
      ],
    },
  },
  'ensemble_hf/bert-trt': {
    name: 'bert-trt',
    platform: 'tensorrt_plan',
    max_batch_size: 16,
    input: [
      { name: 'token_ids', data_type: 'TYPE_INT32', dims: [128n] },
      { name: 'attn_mask', data_type: 'TYPE_INT32', dims: [128n] },
    ],
    output: [
      { name: 'output', data_type: 'TYPE_FP32', dims: [128n, 384n] },
      { name: 'pooled_embeds', data_type: 'TYPE_FP32', dims: [384n] },
    ],
    instance_group: [{ kind: 'KIND_GPU' }],
  },
  // Without the seed's EXECUTION_ENV_PATH: our image provides the packages (the README documents the alternative).
  'ensemble_hf/preprocess': {
    name: 'preprocess',
    backend: 'python',
    max_batch_size: 16,
    input: [{ name: 'INPUT0', data_type: 'TYPE_STRING', dims: [1n] }],
    output: [
      { name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [128n] },
      { name: 'OUTPUT1', data_type: 'TYPE_INT32', dims: [128n] },
    ],
    instance_group: [{ kind: 'KIND_CPU' }],
  },
  'ensemble_hf/postprocess': {
    name: 'postprocess',
    backend: 'python',
    max_batch_size: 16,
    input: [
      { name: 'TOKEN_EMBEDS_POST', data_type: 'TYPE_FP32', dims: [128n, 384n] },
      { name: 'ATTENTION_POST', data_type: 'TYPE_INT32', dims: [128n] },
    ],
    output: [{ name: 'SENT_EMBED', data_type: 'TYPE_FP32', dims: [384n] }],
    instance_group: [{ kind: 'KIND_GPU' }],
  },
  'ensemble_dali_inception/ensemble_dali_inception': {
    name: 'ensemble_dali_inception',
    platform: 'ensemble',
    max_batch_size: 256,
    input: [{ name: 'INPUT', data_type: 'TYPE_UINT8', dims: [-1n] }],
    output: [{ name: 'OUTPUT', data_type: 'TYPE_FP32', dims: [1001n] }],
    ensemble_scheduling: {
      step: [
        {
          model_name: 'dali',
          model_version: -1n,
          input_map: { DALI_INPUT_0: 'INPUT' },
          output_map: { DALI_OUTPUT_0: 'preprocessed_image' },
        },
        {
          model_name: 'inception_graphdef',
          model_version: -1n,
          input_map: { input: 'preprocessed_image' },
          output_map: { 'InceptionV3/Predictions/Softmax': 'OUTPUT' },
        },
      ],
    },
  },
  'ensemble_dali_inception/dali': {
    name: 'dali',
    backend: 'dali',
    max_batch_size: 256,
    input: [{ name: 'DALI_INPUT_0', data_type: 'TYPE_UINT8', dims: [-1n] }],
    output: [{ name: 'DALI_OUTPUT_0', data_type: 'TYPE_FP32', dims: [299n, 299n, 3n] }],
    parameters: { num_threads: { string_value: '12' } },
  },
  'ensemble_dali_inception/inception_graphdef': {
    name: 'inception_graphdef',
    platform: 'tensorflow_graphdef',
    max_batch_size: 256,
    input: [{ name: 'input', data_type: 'TYPE_FP32', format: 'FORMAT_NHWC', dims: [299n, 299n, 3n] }],
    output: [
      {
        name: 'InceptionV3/Predictions/Softmax',
        data_type: 'TYPE_FP32',
        dims: [1001n],
        label_filename: 'inception_labels.txt',
      },
    ],
    instance_group: [{ kind: 'KIND_GPU' }],
  },
  'resnet_pytorch/resnet': {
    name: 'resnet',
    platform: 'pytorch_libtorch',
    max_batch_size: 128,
    input: [{ name: 'INPUT__0', data_type: 'TYPE_FP32', dims: [3n, 224n, 224n] }],
    output: [{ name: 'OUTPUT__0', data_type: 'TYPE_FP32', dims: [1000n] }],
  },
  'resnet_tensorrt/resnet': {
    name: 'resnet',
    platform: 'tensorrt_plan',
    max_batch_size: 128,
    input: [{ name: 'input', data_type: 'TYPE_FP32', dims: [3n, 224n, 224n] }],
    output: [{ name: 'output', data_type: 'TYPE_FP32', dims: [1000n] }],
    model_warmup: [
      {
        name: 'bs128 Warmup',
        batch_size: 128,
        inputs: { input: { data_type: 'TYPE_FP32', dims: [3n, 224n, 224n], zero_data: false } },
      },
    ],
  },
};

describe('seed example configs', () => {
  it.each(Object.entries(SEED_CONFIGS))('%s/config.pbtxt has exactly the seed’s fields and values', (path, seed) => {
    const [example, model] = path.split('/') as [string, string];
    // Round-trip through plain objects: the parser builds maps without a prototype.
    const plain = (v: unknown) => structuredClone(v);
    expect(plain(readConfig(join(EXAMPLES_DIR, example), model))).toStrictEqual(plain(seed));
  });

  it('keeps the seed’s conda-pack variant as documentation only, never in a config', () => {
    for (const model of ['preprocess', 'postprocess']) {
      const config = readConfig(join(EXAMPLES_DIR, 'ensemble_hf'), model);
      expect(config.parameters?.EXECUTION_ENV_PATH).toBeUndefined();
    }
    const readme = readFileSync(join(EXAMPLES_DIR, 'ensemble_hf', 'README.md'), 'utf8');
    expect(readme).toContain('$$TRITON_MODEL_DIRECTORY/processing_env.tar.gz');
  });
});
