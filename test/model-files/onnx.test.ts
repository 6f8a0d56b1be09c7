// The ONNX reader against real models written by python's onnx package (test/model-files/make_onnx_fixtures.py),
// and against files that are not ONNX models.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { overridableInitializers, readOnnxModel, requiredInputs, type OnnxModelSummary } from '../../lib/model-files/onnx';
import { pythonWith, suiteFor } from '../tools';

const python = pythonWith(['onnx', 'numpy']);
const dir = mkdtempSync(join(tmpdir(), 'mme-onnx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function read(name: string): OnnxModelSummary {
  const result = readOnnxModel(join(dir, name));
  if (!result.ok) throw new Error(`${name}: ${result.reason}`);
  return result.model;
}

suiteFor({ python: ['onnx', 'numpy'] })('ONNX reader on models written by python onnx', () => {
  beforeAll(() => {
    const run = spawnSync(python!, [join(__dirname, 'make_onnx_fixtures.py'), dir], { encoding: 'utf8', timeout: 120_000 });
    if (run.status !== 0) throw new Error(run.stderr);
  });

  it('reads inputs, outputs, element types and dims (dim_param and unknown dims as -1)', () => {
    const model = read('batching.onnx');
    expect(model.irVersion).toBe(8);
    expect(model.opsets).toEqual([{ domain: '', version: 17 }]);
    expect(model.outputs.map((o) => [o.name, o.elemType, o.dims])).toEqual([
      ['y', 1, [-1, -1, 3]],
      ['label', 7, [-1, -1, 3]],
    ]);
    expect(model.outputs[0]!.dimParams).toEqual(['batch', 'seq', '']);
  });

  it('does not count an initializer listed in graph.input as an input; from IR 4 it is overridable', () => {
    const model = read('batching.onnx');
    expect(model.graphInputs.map((i) => i.name)).toEqual(['x', 'bias']);
    expect(model.initializers).toEqual(['bias']);
    expect(requiredInputs(model).map((i) => i.name)).toEqual(['x']);
    expect(overridableInitializers(model).map((i) => i.name)).toEqual(['bias']);
    const old = read('old_ir.onnx');
    expect(requiredInputs(old).map((i) => i.name)).toEqual(['x']);
    expect(overridableInitializers(old)).toEqual([]);
  });

  it('skips the weights: a 24 MiB initializer costs no more than one small read', () => {
    const model = read('weights.onnx');
    expect(model.graphInputs.map((i) => [i.name, i.dims])).toEqual([['x', [6 * 1024 * 1024]]]);
    expect(model.initializers).toEqual(['w']);
    expect(model.bytesRead).toBeLessThan(64 * 1024);
  });

  it('names the files of initializers stored as external data, without reading them', () => {
    const model = read('external.onnx');
    expect(model.externalData).toEqual(['external.onnx.data']);
    expect(model.initializers).toEqual(['ext_w']);
  });

  it('reports non-tensor inputs by kind, rank-0 and shapeless tensors with no dims, and dim_value -1 as -1', () => {
    const seq = read('sequence.onnx');
    expect(seq.graphInputs[0]).toMatchObject({ name: 'items', kind: 'sequence' });
    expect(seq.outputs[0]).toMatchObject({ name: 'n', kind: 'tensor', elemType: 7, dims: [] });
    const negative = read('negative.onnx');
    expect(negative.graphInputs.map((i) => [i.name, i.dims])).toEqual([['x', [-1, 4]], ['free', []]]);
  });

  it('says a truncated model is not an ONNX model', () => {
    const whole = readFileSync(join(dir, 'batching.onnx'));
    writeFileSync(join(dir, 'truncated.onnx'), whole.subarray(0, whole.length - 20));
    const result = readOnnxModel(join(dir, 'truncated.onnx'));
    expect(result).toMatchObject({ ok: false });
    expect((result as { reason: string }).reason).toMatch(/^is not an ONNX model/);
  });
});

describe('ONNX reader on files that are not ONNX models', () => {
  const write = (name: string, content: string | Buffer) => {
    writeFileSync(join(dir, name), content);
    return readOnnxModel(join(dir, name));
  };

  it('says an empty file is empty', () => {
    expect(write('empty.onnx', '')).toEqual({ ok: false, reason: 'is empty' });
  });

  it('says text, a zip archive (a PyTorch file under the wrong name) and random bytes are not ONNX models', () => {
    for (const [name, content] of [
      ['text.onnx', 'weights'],
      ['zip.onnx', Buffer.from('504b0304140000000800', 'hex')],
      ['random.onnx', Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % 256))],
    ] as const) {
      const result = write(name, content);
      expect(result.ok).toBe(false);
      expect((result as { reason: string }).reason).toMatch(/^is not an ONNX model/);
    }
  });

  it('says a protobuf message without a graph is not an ONNX model', () => {
    // ir_version: 8, producer_name: "x" — well-formed protobuf, but no graph.
    const result = write('nograph.onnx', Buffer.from([0x08, 0x08, 0x12, 0x01, 0x78]));
    expect(result).toEqual({ ok: false, reason: 'is not an ONNX model: its protobuf encoding breaks off (no graph)' });
  });

  it('reports a missing file without throwing', () => {
    expect(readOnnxModel(join(dir, 'absent.onnx'))).toEqual({ ok: false, reason: 'cannot be opened (ENOENT)' });
  });
});
