// The TensorFlow readers against GraphDefs and SavedModels written by python's protobuf with TensorFlow's field numbers
// (test/model-files/make_model_files.py), and against files that are not what their name says.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ByteSource } from '../../lib/model-files/protobuf-wire';
import { readGraphDef, readSavedModel } from '../../lib/model-files/tensorflow';
import { modelFilePython, writeModelFiles } from './model-file-writer';

const python = modelFilePython();
const dir = mkdtempSync(join(tmpdir(), 'mme-tf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function source(path: string): ByteSource {
  const bytes = readFileSync(path);
  return { size: bytes.length, read: (buffer, length, position) => bytes.copy(buffer, 0, position, position + length) };
}

const MiB = 1024 * 1024;
/**
 * The weights the readers must skip: 3 MiB is past the reader's 16 KiB window nearly two hundred times and, as a real
 * model's tens of MiB are, a field whose length is a 4-byte varint (2 MiB and more); python writes it (and this test
 * reads it whole) in a fraction of what 24 MiB cost, for the same proof.
 */
const WEIGHTS = 3 * MiB;

const suite = python ? describe : describe.skip;
suite(`TensorFlow readers on files written by python protobuf${python ? '' : ' (skipped: no python3 with protobuf)'}`, () => {
  beforeAll(() => {
    writeModelFiles({
      [join(dir, 'frozen.graphdef')]: {
        format: 'graphdef',
        constBytes: WEIGHTS,
        nodes: [
          ['input', 'Placeholder'],
          ['InceptionV3/Conv2d_1a_3x3/Conv2D', 'Conv2D'],
          ['keep_prob', 'Placeholder'],
          ['InceptionV3/Predictions/Softmax', 'Softmax'],
        ],
      },
      [join(dir, 'saved/saved_model.pb')]: {
        format: 'savedmodel',
        graphBytes: WEIGHTS,
        metaGraphs: [
          { tags: ['train'], signatures: { train: { inputs: [['x', 'x:0', 'DT_FLOAT', [-1, 4]]], outputs: [] } } },
          {
            tags: ['serve'],
            signatures: {
              serving_default: {
                inputs: [
                  ['input_ids', 'serving_default_input_ids:0', 'DT_INT32', [-1, 128]],
                  ['mask', 'serving_default_mask:0', 'DT_INT64', [-1, -1]],
                ],
                outputs: [
                  ['logits', 'StatefulPartitionedCall:0', 'DT_HALF', [-1, 2]],
                  ['score', 'StatefulPartitionedCall:1', 'DT_STRING', null],
                ],
              },
              __saved_model_init_op: { inputs: [], outputs: [['__saved_model_init_op', 'NoOp', 'DT_INVALID', null]] },
            },
          },
        ],
      },
    });
  });

  it("reads a GraphDef's Placeholders and other nodes, skipping a 3 MiB Const tensor", () => {
    const read = readGraphDef(source(join(dir, 'frozen.graphdef')));
    if (!read.ok) throw new Error(read.reason);
    expect(read.model.placeholders).toEqual(['input', 'keep_prob']);
    expect(read.model.otherNodes).toEqual(['weights', 'InceptionV3/Conv2d_1a_3x3/Conv2D', 'InceptionV3/Predictions/Softmax']);
    expect(read.model.bytesRead).toBeLessThan(64 * 1024);
  });

  it("reads a SavedModel's tags and signatures with dtypes and shapes, skipping the graph", () => {
    const read = readSavedModel(source(join(dir, 'saved/saved_model.pb')));
    if (!read.ok) throw new Error(read.reason);
    expect(read.model.metaGraphs.map((m) => m.tags)).toEqual([['train'], ['serve']]);
    const serve = read.model.metaGraphs[1]!;
    const sig = serve.signatures.find((s) => s.key === 'serving_default')!;
    expect(sig.methodName).toBe('tensorflow/serving/predict');
    // A protobuf map's entries come in no set order.
    const byKey = <T extends { key: string }>(list: readonly T[]) => [...list].sort((a, b) => a.key.localeCompare(b.key));
    expect(byKey(sig.inputs)).toEqual([
      { key: 'input_ids', tensorName: 'serving_default_input_ids:0', dtype: 3, dims: [-1, 128] },
      { key: 'mask', tensorName: 'serving_default_mask:0', dtype: 9, dims: [-1, -1] },
    ]);
    // An unknown rank reads as rank 0, as the backend reads it (shape.dim().size() == 0).
    expect(byKey(sig.outputs).map((o) => [o.key, o.dtype, o.dims])).toEqual([
      ['logits', 19, [-1, 2]],
      ['score', 7, []],
    ]);
    expect(serve.signatures.map((s) => s.key).sort()).toEqual(['__saved_model_init_op', 'serving_default']);
    expect(read.model.bytesRead).toBeLessThan(64 * 1024);
  });

  it('says a SavedModel read as a GraphDef, or a GraphDef cut short, is not what its name says', () => {
    const whole = readFileSync(join(dir, 'frozen.graphdef'));
    writeFileSync(join(dir, 'cut.graphdef'), whole.subarray(0, whole.length - 10));
    const cut = readGraphDef(source(join(dir, 'cut.graphdef')));
    expect(cut).toEqual({ ok: false, reason: expect.stringMatching(/^is not a TensorFlow GraphDef: its protobuf encoding breaks off/) });
    // A GraphDef is no SavedModel: its nodes (field 1) are not the schema version (a varint).
    const swapped = readSavedModel(source(join(dir, 'frozen.graphdef')));
    expect(swapped).toEqual({ ok: false, reason: expect.stringMatching(/^is not a TensorFlow SavedModel/) });
  });
});

describe('TensorFlow readers on files that are not TensorFlow models', () => {
  const bytes = (b: Buffer): ByteSource => ({
    size: b.length,
    read: (buffer, length, position) => b.copy(buffer, 0, position, position + length),
  });

  it('says an empty file is empty', () => {
    expect(readGraphDef(bytes(Buffer.alloc(0)))).toEqual({ ok: false, reason: 'is empty' });
    expect(readSavedModel(bytes(Buffer.alloc(0)))).toEqual({ ok: false, reason: 'is empty' });
  });

  it('says text, a zip archive (a TorchScript file under the wrong name) and an ONNX header are not TensorFlow models', () => {
    for (const content of [
      Buffer.from('stand-in for model.graphdef\n'),
      Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00]),
      Buffer.from([0x08, 0x08, 0x12, 0x04, 0x74, 0x65, 0x73, 0x74]), // ir_version 8, producer_name "test"
    ]) {
      const graph = readGraphDef(bytes(content));
      expect(graph.ok).toBe(false);
      expect(graph.ok ? '' : graph.reason).toMatch(/^is not a TensorFlow GraphDef/);
    }
  });

  it('says a SavedModel without a meta graph is not a SavedModel', () => {
    expect(readSavedModel(bytes(Buffer.from([0x08, 0x01])))).toEqual({
      ok: false,
      reason: 'is not a TensorFlow SavedModel: its protobuf encoding breaks off (no meta graph)',
    });
  });
});
