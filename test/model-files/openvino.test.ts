// The OpenVINO IR reader against model.xml files written by test/model-files/make_model_files.py (the IR v11 layout
// of openvino's serializer), and against files that are not IRs.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readOpenVinoModel } from '../../lib/model-files/openvino';
import type { ByteSource } from '../../lib/model-files/protobuf-wire';
import { modelFilePython, writeModelFiles } from './model-file-writer';

const python = modelFilePython();
const dir = mkdtempSync(join(tmpdir(), 'mme-ov-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (b: Buffer): ByteSource => ({
  size: b.length,
  read: (buffer, length, position) => b.copy(buffer, 0, position, position + length),
});

const suite = python ? describe : describe.skip;
suite(`OpenVINO IR reader${python ? '' : ' (skipped: no python3)'}`, () => {
  beforeAll(() => {
    writeModelFiles({
      [join(dir, 'model.xml')]: {
        format: 'openvino',
        layers: 3,
        inputs: [
          ['pixel_values,images', 'FP32', [-1, 3, 224, 224], '[N,C,H,W]'],
          ['', 'I64', [1]],
          ['dynamic', 'FP16', null],
        ],
        outputs: [['logits,output:0', 'FP32', [-1, 1000]]],
      },
    });
  });

  it('reads Parameters and Results with names, the name OpenVINO serves (the smallest), precision, dims and layout', () => {
    const read = readOpenVinoModel(bytes(readFileSync(join(dir, 'model.xml'))));
    if (!read.ok) throw new Error(read.reason);
    expect(read.model.version).toBe(11);
    expect(read.model.inputs).toEqual([
      {
        layer: 'pixel_values',
        names: ['pixel_values', 'images'],
        anyName: 'images',
        precision: 'FP32',
        dims: [-1, 3, 224, 224],
        layout: '[N,C,H,W]',
      },
      { layer: 'param1', names: [], precision: 'I64', dims: [1] },
      { layer: 'dynamic', names: ['dynamic'], anyName: 'dynamic', precision: 'FP16' },
    ]);
    // A Result's names are those of the port that feeds it.
    expect(read.model.outputs).toEqual([
      { layer: expect.stringMatching(/^result/), names: ['logits', 'output:0'], anyName: 'logits', precision: 'FP32', dims: [-1, 1000] },
    ]);
  });
});

describe('OpenVINO IR reader on files that are not IRs', () => {
  it('says an empty file is empty, and names what else is wrong', () => {
    expect(readOpenVinoModel(bytes(Buffer.alloc(0)))).toEqual({ ok: false, reason: 'is empty' });
    expect(readOpenVinoModel(bytes(Buffer.from('stand-in for model.xml\n')))).toEqual({
      ok: false,
      reason: 'is not an OpenVINO IR: it is not XML',
    });
    expect(readOpenVinoModel(bytes(Buffer.from('<?xml version="1.0"?><graph/>')))).toEqual({
      ok: false,
      reason: 'is not an OpenVINO IR: it has no <net> element',
    });
    expect(readOpenVinoModel(bytes(Buffer.from('<?xml version="1.0"?><net name="m" version="11"><layers><layer id="0"')))).toEqual({
      ok: false,
      reason: 'is not an OpenVINO IR: it ends before </net> (cut short?)',
    });
  });
});
