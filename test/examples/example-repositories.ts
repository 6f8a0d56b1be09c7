// The example repositories under examples/ as the tests see them: where they are, which files their scripts
// generate on a GPU host (and the tests stand in for), and how to read their configs.

import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseModelConfig } from '../../lib/config/parse';
import { daliPipeline, type DaliPipelineSpec } from '../model-files/dali-writer';
import { graphDef } from '../model-files/tensorflow-writer';
import { torchScript } from '../model-files/torchscript-writer';
import type { ModelConfig } from '../../lib/config/model-config-schema';

export const EXAMPLES_DIR = join(__dirname, '..', '..', 'examples');

/**
 * The seeds' repositories and the files their generate scripts write: big weights, or files downloaded from the
 * internet. None is committed (examples/.gitignore); the tests create stand-ins for them.
 */
export const SEED_EXAMPLES: Readonly<Record<string, { models: string[]; generated: string[] }>> = {
  ensemble_hf: {
    models: ['bert-trt', 'ensemble', 'postprocess', 'preprocess'],
    generated: ['bert-trt/1/model.plan', 'preprocess/tokenizer.json'],
  },
  ensemble_dali_inception: {
    models: ['dali', 'ensemble_dali_inception', 'inception_graphdef'],
    generated: ['dali/1/model.dali', 'inception_graphdef/1/model.graphdef', 'inception_graphdef/inception_labels.txt'],
  },
  resnet_pytorch: { models: ['resnet'], generated: ['resnet/1/model.pt'] },
  resnet_tensorrt: { models: ['resnet'], generated: ['resnet/1/model.plan'] },
};

/**
 * Google's frozen Inception v3 (inception_v3_2016_08_28_frozen.pb) as the TensorFlow backend sees it: the Placeholder
 * `input` and, among its other nodes, the softmax the seed serves. The stand-in keeps that interface, so the example's
 * config is checked against the graph as Triton checks it.
 */
export const INCEPTION_V3_NODES: readonly (readonly [string, string])[] = [
  ['input', 'Placeholder'],
  ['InceptionV3/Predictions/Reshape', 'Reshape'],
  ['InceptionV3/Predictions/Softmax', 'Softmax'],
  ['InceptionV3/Predictions/Reshape_1', 'Reshape'],
];

/**
 * What examples/ensemble_dali_inception/dali_pipeline.py serializes, as the DALI backend sees it: one external source
 * `DALI_INPUT_0` declaring no dtype or ndim, and the crop_mirror_normalize's output (DALI names it after the operator,
 * `__CropMirrorNormalize_<id>`; the config renames it DALI_OUTPUT_0 by position), with no output_dtype or output_ndim.
 */
export const INCEPTION_DALI_PIPELINE: DaliPipelineSpec = {
  batchSize: 3,
  inputs: [{ name: 'DALI_INPUT_0', device: 'cpu' }],
  outputs: [{ name: '__CropMirrorNormalize_3', device: 'gpu' }],
};

/**
 * Stand-in content: a label file needs one line per class of its output; a model file the validator reads carries the
 * upstream model's interface; other weights only need to exist.
 */
function standIn(relativePath: string): string | Buffer {
  if (relativePath.endsWith('.graphdef')) return graphDef(INCEPTION_V3_NODES);
  if (relativePath.endsWith('model.dali')) return daliPipeline(INCEPTION_DALI_PIPELINE);
  // export_torchscript.py traces torchvision's ResNet-50: its forward takes the one tensor x.
  if (relativePath.endsWith('model.pt')) {
    return torchScript({ forward: 'x: Tensor', module: '__torch__.torchvision.models.resnet', className: 'ResNet', archive: 'model' });
  }
  if (relativePath.endsWith('inception_labels.txt')) {
    return Array.from({ length: 1001 }, (_, i) => (i === 0 ? 'background' : `class_${i}`)).join('\n') + '\n';
  }
  return `stand-in for ${relativePath}, which the example's generate script writes on a GPU host\n`;
}

/** Copies an example to a fresh temp dir and writes stand-ins for its generated files; returns the copy's path. */
export function copyWithStandIns(example: string): string {
  const target = join(mkdtempSync(join(tmpdir(), `mme-example-${example}-`)), example);
  cpSync(join(EXAMPLES_DIR, example), target, { recursive: true });
  for (const file of SEED_EXAMPLES[example]?.generated ?? []) {
    mkdirSync(dirname(join(target, file)), { recursive: true });
    writeFileSync(join(target, file), standIn(file));
  }
  return target;
}

/** Parses `<repository>/<model>/config.pbtxt`; fails the test with the diagnostics when it does not parse. */
export function readConfig(repository: string, model: string): ModelConfig {
  const file = join(repository, model, 'config.pbtxt');
  const { config, diagnostics } = parseModelConfig(readFileSync(file, 'utf8'), { file, model });
  if (diagnostics.some((d) => d.severity === 'error')) {
    throw new Error(`${file} does not parse:\n${diagnostics.map((d) => `  ${d.message}`).join('\n')}`);
  }
  return config;
}
