// Triton's TensorFlow backend, offline: a GraphDef's potential inputs and outputs, and a SavedModel's signature with
// the backend's auto-complete, checked against the config with the backend's own wording. The model files are written
// by python's protobuf (test/model-files/make_model_files.py).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkGraphDefModel, checkSavedModel } from '../../lib/repository/tensorflow-rules';
import { loadRepository, validateRepository } from '../../lib/repository/validate';
import { modelFilePython, writeModelFiles, type ModelFileSpec } from '../model-files/model-file-writer';
import { makeRepo, removeRepos, type RepoFiles } from './repo-builder';

const python = modelFilePython();
const specs: Record<string, ModelFileSpec> = {
  // Google's frozen Inception v3 as the seed serves it: one Placeholder 'input', the softmax node among others.
  inception: {
    format: 'graphdef',
    constBytes: 4096,
    nodes: [
      ['input', 'Placeholder'],
      ['InceptionV3/Conv2d_1a_3x3/Conv2D', 'Conv2D'],
      ['InceptionV3/Predictions/Reshape_1', 'Reshape'],
      ['InceptionV3/Predictions/Softmax', 'Softmax'],
    ],
  },
  twoPlaceholders: {
    format: 'graphdef',
    nodes: [
      ['INPUT', 'Placeholder'],
      ['START', 'Placeholder'],
      ['OUTPUT', 'Identity'],
    ],
  },
  noNodes: { format: 'graphdef', nodes: [] },
  // A Keras SavedModel: batch dimension None, one string output of unknown rank beside the logits.
  classifier: {
    format: 'savedmodel',
    graphBytes: 4096,
    metaGraphs: [
      {
        tags: ['serve'],
        signatures: {
          serving_default: {
            inputs: [
              ['input_ids', 'serving_default_input_ids:0', 'DT_INT32', [-1, 128]],
              ['attention_mask', 'serving_default_attention_mask:0', 'DT_INT32', [-1, 128]],
            ],
            outputs: [['logits', 'StatefulPartitionedCall:0', 'DT_FLOAT', [-1, 2]]],
          },
          embeddings: {
            inputs: [['text', 'embeddings_text:0', 'DT_STRING', [-1]]],
            outputs: [['vector', 'StatefulPartitionedCall_1:0', 'DT_FLOAT', [-1, 512]]],
          },
          __saved_model_init_op: { inputs: [], outputs: [['__saved_model_init_op', 'NoOp', 'DT_INVALID', null]] },
        },
      },
    ],
  },
  fixedShape: {
    format: 'savedmodel',
    metaGraphs: [
      {
        tags: ['serve'],
        signatures: {
          serving_default: {
            inputs: [['x', 'x:0', 'DT_FLOAT', [1, 4]]],
            outputs: [['y', 'y:0', 'DT_FLOAT', [1, 4]]],
          },
        },
      },
    ],
  },
  gpuTagged: {
    format: 'savedmodel',
    metaGraphs: [
      { tags: ['serve', 'gpu'], signatures: { serving_default: { inputs: [['x', 'x:0', 'DT_FLOAT', [-1, 4]]], outputs: [] } } },
    ],
  },
  complex: {
    format: 'savedmodel',
    metaGraphs: [
      {
        tags: ['serve'],
        signatures: { serving_default: { inputs: [['x', 'x:0', 'DT_COMPLEX64', [-1, 4]]], outputs: [['y', 'y:0', 'DT_FLOAT', [-1]]] } },
      },
    ],
  },
};
const files: Record<string, Buffer> = {};

const suite = python ? describe : describe.skip;
afterAll(removeRepos);

suite(`Triton's TensorFlow backend, offline${python ? '' : ' (skipped: no python3 with protobuf)'}`, () => {
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-tf-rules-'));
    writeModelFiles(Object.fromEntries(Object.entries(specs).map(([k, s]) => [join(dir, k), s])));
    for (const key of Object.keys(specs)) files[key] = readFileSync(join(dir, key));
    rmSync(dir, { recursive: true, force: true });
  });

  const messages = (d: readonly { message: string }[]) => d.map((x) => x.message);

  describe('GraphDef (graphdef::ValidateTRITONTFModel)', () => {
    async function check(config: string, graph: keyof typeof specs | Buffer = 'inception') {
      const repo = await loadRepository(
        makeRepo({
          'm/config.pbtxt': `platform: "tensorflow_graphdef"\n${config}`,
          'm/1/model.graphdef': Buffer.isBuffer(graph) ? graph : files[graph]!,
        }),
      );
      return checkGraphDefModel(repo.models[0]!);
    }
    const seed = (input = 'input', output = 'InceptionV3/Predictions/Softmax') =>
      `max_batch_size: 256\ninput [ { name: "${input}" data_type: TYPE_FP32 format: FORMAT_NHWC dims: [ 299, 299, 3 ] } ]\n` +
      `output [ { name: "${output}" data_type: TYPE_FP32 dims: [ 1001 ] } ]`;

    it("accepts the seed's Inception config against the graph's Placeholder and softmax node", async () => {
      expect(await check(seed())).toEqual([]);
    });

    it('rejects an input that is not a Placeholder, at its line, with the allowed names', async () => {
      const found = await check(seed('inputt'));
      expect(messages(found)).toEqual([expect.stringMatching(/^unexpected inference input 'inputt', allowed inputs are: input\. /)]);
      expect(found[0]).toMatchObject({ severity: 'error', code: 'tensorflow-unknown-input', file: 'm/config.pbtxt', line: 3 });
    });

    it('rejects an output that is no node, and says when only the ":0" suffix is wrong', async () => {
      const typo = await check(seed('input', 'InceptionV3/Predictions/Softmaxx'));
      expect(typo).toMatchObject([{ code: 'tensorflow-unknown-output', line: 4 }]);
      expect(typo[0]!.message).toMatch(/^unexpected inference output 'InceptionV3\/Predictions\/Softmaxx', allowed outputs are: /);
      const suffixed = await check(seed('input', 'InceptionV3/Predictions/Softmax:0'));
      expect(suffixed[0]!.message).toContain("Name the node without the output index: 'InceptionV3/Predictions/Softmax'.");
      // A Placeholder is not a potential output (tensorflow_backend_tf.cc:887-893).
      expect(await check(seed('input', 'input'))).toMatchObject([{ code: 'tensorflow-unknown-output' }]);
    });

    it('rejects more inputs than the graph has Placeholders, but not fewer', async () => {
      const two = 'input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "START" data_type: TYPE_INT32 dims: [ 1 ] },' +
        ' { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\noutput [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]';
      const found = await check(two, 'twoPlaceholders');
      expect(messages(found)).toContainEqual(
        expect.stringMatching(/^unable to load model 'm', configuration expects 3 inputs, model provides at most 2\./),
      );
      const one = 'input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n' +
        'output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]';
      expect(await check(one, 'twoPlaceholders')).toEqual([]);
    });

    it('rejects a sequence control the graph does not take, and accepts one it does', async () => {
      const io = 'input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n' +
        'output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]';
      const control = (name: string) =>
        `max_batch_size: 1\nsequence_batching { control_input [ { name: "${name}" ` +
        `control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }\n${io}`;
      expect(messages(await check(control('BEGIN'), 'twoPlaceholders'))).toEqual([
        expect.stringMatching(/^configuration specified sequence control 'BEGIN', but model does not provide that input\./),
      ]);
      expect(await check(control('START'), 'twoPlaceholders')).toEqual([]);
    });

    it('rejects a graph without nodes, a file that is no GraphDef, and warns about an empty stand-in', async () => {
      expect(await check(seed(), 'noNodes')).toMatchObject([
        { code: 'tensorflow-empty-network', message: expect.stringMatching(/^model m has an empty network/) },
      ]);
      const text = await check(seed(), Buffer.from('stand-in for model.graphdef\n'));
      expect(text).toMatchObject([{ severity: 'error', code: 'tensorflow-graphdef-invalid', file: 'm/1/model.graphdef' }]);
      expect(text[0]!.message).toMatch(/^m\/1\/model\.graphdef is not a TensorFlow GraphDef: /);
      expect(await check(seed(), Buffer.alloc(0))).toMatchObject([{ severity: 'warning', code: 'model-file-empty' }]);
    });
  });

  describe('SavedModel (AutoCompleteHelper, savedmodel::ValidateTRITONTFModel)', () => {
    async function check(config: string, model: keyof typeof specs = 'classifier') {
      const repo = await loadRepository(
        makeRepo({
          'm/config.pbtxt': `platform: "tensorflow_savedmodel"\n${config}`,
          'm/1/model.savedmodel/saved_model.pb': files[model]!,
        }),
      );
      return checkSavedModel(repo.models[0]!);
    }
    const ids = '{ name: "input_ids" data_type: TYPE_INT32 dims: [ 128 ] }';
    const mask = '{ name: "attention_mask" data_type: TYPE_INT32 dims: [ 128 ] }';
    const logits = 'output [ { name: "logits" data_type: TYPE_FP32 dims: [ 2 ] } ]';

    it('completes an empty config from the serving signature: max_batch_size 4, dynamic batching, inputs and outputs', async () => {
      const { diagnostics, completed } = await check('');
      expect(diagnostics).toEqual([]);
      expect(completed).toMatchObject({
        max_batch_size: 4,
        dynamic_batching: {},
        output: [{ name: 'logits', data_type: 'TYPE_FP32', dims: [2n] }],
      });
      expect(completed!.input!.map((i) => [i.name, i.data_type, i.dims]).sort()).toEqual([
        ['attention_mask', 'TYPE_INT32', [128n]],
        ['input_ids', 'TYPE_INT32', [128n]],
      ]);
    });

    it('adds the inputs a partial config leaves out and fills the dims it does not give', async () => {
      const { diagnostics, completed } = await check(`max_batch_size: 8\ninput [ { name: "input_ids" data_type: TYPE_INT32 } ]\n${logits}`);
      expect(diagnostics).toEqual([]);
      expect(completed!.input).toEqual([
        { name: 'input_ids', data_type: 'TYPE_INT32', dims: [128n] },
        { name: 'attention_mask', data_type: 'TYPE_INT32', dims: [128n] },
      ]);
    });

    it('accepts a config that matches', async () => {
      expect((await check(`max_batch_size: 8\ninput [ ${ids}, ${mask} ]\n${logits}`)).diagnostics).toEqual([]);
    });

    it('rejects an unknown input and an unknown output with the signature names', async () => {
      const typo = await check(`max_batch_size: 8\ninput [ ${ids}, { name: "mask" data_type: TYPE_INT32 dims: [ 128 ] } ]\n${logits}`);
      expect(messages(typo.diagnostics)[0]).toMatch(/^unexpected inference input 'mask', allowed inputs are: attention_mask, input_ids\. /);
      expect(typo.diagnostics[0]).toMatchObject({ code: 'tensorflow-unknown-input', file: 'm/config.pbtxt', line: 3 });
      const probs = 'output [ { name: "probs" data_type: TYPE_FP32 dims: [ 2 ] } ]';
      const out = await check(`max_batch_size: 8\ninput [ ${ids}, ${mask} ]\n${probs}`);
      expect(messages(out.diagnostics)[0]).toMatch(/^unexpected inference output 'probs', allowed outputs are: logits\. /);
    });

    it('rejects a data type and dims the signature does not have, in the backend words', async () => {
      const wide = '{ name: "attention_mask" data_type: TYPE_INT64 dims: [ 128 ] }';
      const type = await check(`max_batch_size: 8\ninput [ ${ids}, ${wide} ]\n${logits}`);
      expect(messages(type.diagnostics)).toEqual([
        "unable to load model 'm', configuration expects datatype TYPE_INT64 for input 'attention_mask', model provides TYPE_INT32",
      ]);
      const three = 'output [ { name: "logits" data_type: TYPE_FP32 dims: [ 3 ] } ]';
      const dims = await check(`max_batch_size: 8\ninput [ ${ids}, ${mask} ]\n${three}`);
      expect(messages(dims.diagnostics)).toEqual([
        "model 'm', tensor 'logits': the model expects 2 dimensions (shape [-1,2]) but the model configuration specifies 2 dimensions " +
          '(an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape [-1,3])',
      ]);
    });

    it('counts batch inputs as inputs', async () => {
      const ragged = `max_batch_size: 8\ninput [ ${ids}, ${mask} ]\n${logits}\n` +
        'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "count" data_type: TYPE_FP32 source_input: "input_ids" } ]';
      expect(messages((await check(ragged)).diagnostics)).toContainEqual(
        expect.stringMatching(/^unable to load model 'm', configuration expects 3 inputs, model provides 2\./),
      );
    });

    it('fails autofill when max_batch_size is set and the signature has a fixed first dimension; max_batch_size 0 loads', async () => {
      const batched = await check('max_batch_size: 4', 'fixedShape');
      expect(messages(batched.diagnostics)[0]).toMatch(
        /^unable to autofill for 'm', configuration specified max-batch 4 but model signature does not support batching\./,
      );
      expect(batched.completed).toBeUndefined();
      const plain = await check('max_batch_size: 0', 'fixedShape');
      expect(plain.diagnostics).toEqual([]);
      expect(plain.completed).toMatchObject({ max_batch_size: 0, input: [{ name: 'x', dims: [1n, 4n] }] });
    });

    it('serves the signature TF_SIGNATURE_DEF names, and rejects one the model lacks', async () => {
      const named = (key: string) => `parameters { key: "TF_SIGNATURE_DEF" value: { string_value: "${key}" } }`;
      // Shape [-1] with batching leaves no dims: the backend writes dims [1] with an empty reshape (:1481-1493).
      expect((await check(named('embeddings'))).completed).toMatchObject({
        input: [{ name: 'text', data_type: 'TYPE_STRING', dims: [1n], reshape: { shape: [] } }],
      });
      const missing = await check(named('serving'));
      expect(messages(missing.diagnostics)[0]).toContain("unable to load model 'm', expected 'serving' signature.");
      expect(missing.diagnostics[0]).toMatchObject({ file: 'm/config.pbtxt' });
    });

    it('needs a meta graph tagged exactly {serve}, or the tag TF_GRAPH_TAG names', async () => {
      expect(messages((await check('', 'gpuTagged')).diagnostics)[0]).toContain(
        'failed to load model: Could not find meta graph def matching supplied tags: { serve }.',
      );
    });

    it('rejects a signature tensor of a type Triton has not', async () => {
      expect(messages((await check('', 'complex')).diagnostics)[0]).toContain(
        "unable to process input 'x' for 'm', unsupported datatype 'DT_COMPLEX64'",
      );
    });

    it('lets an ensemble be checked against the completed tensors', async () => {
      const repoFiles: RepoFiles = {
        'classifier/config.pbtxt': 'platform: "tensorflow_savedmodel"',
        'classifier/1/model.savedmodel/saved_model.pb': files.classifier!,
        'ens/config.pbtxt':
          'platform: "ensemble"\nmax_batch_size: 4\ninput [ { name: "IDS" data_type: TYPE_INT32 dims: [ 128 ] }, ' +
          '{ name: "MASK" data_type: TYPE_INT32 dims: [ 128 ] } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ 2 ] } ]\n' +
          'ensemble_scheduling { step [ { model_name: "classifier" model_version: -1 input_map { key: "input_ids" value: "IDS" } ' +
          'input_map { key: "mask" value: "MASK" } output_map { key: "logits" value: "OUT" } } ] }',
        'ens/1/': null,
      };
      const report = await validateRepository(makeRepo(repoFiles));
      expect(report.ok).toBe(false);
      expect(report.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message).join('\n')).toMatch(/mask/);
    });
  });
});
