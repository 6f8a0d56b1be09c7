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

describe('OpenVINO IR reader: the scan that finds Parameters and Results without parsing the whole file', () => {
  const port = (id: number, names: string, dims: number[]) =>
    `<port id="${id}" precision="FP32"${names ? ` names="${names}"` : ''}>${dims.map((d) => `<dim>${d}</dim>`).join('')}</port>`;
  const parameter = (id: number, name: string) =>
    `<layer id="${id}" name="${name}" type="Parameter" version="opset1"><data shape="1,4" element_type="f32"/>` +
    `<output>${port(0, name, [1, 4])}</output></layer>\n`;
  const relu = (id: number, names: string) =>
    `<layer id="${id}" name="relu${id}" type="ReLU" version="opset1"><input>${port(0, '', [1, 4])}</input>` +
    `<output>${port(1, names, [1, 4])}</output></layer>\n`;
  const result = (id: number) =>
    `<layer id="${id}" name="sink${id}" type="Result" version="opset1"><input>${port(0, '', [1, 4])}</input></layer>\n`;
  const ir = (layers: string, edges: string) =>
    `<?xml version="1.0"?>\n<net name="m" version="11">\n<layers>\n${layers}</layers>\n<edges>\n${edges}</edges>\n</net>\n`;
  const read = (text: string) => {
    const got = readOpenVinoModel(bytes(Buffer.from(text)));
    if (!got.ok) throw new Error(got.reason);
    return { inputs: got.model.inputs.map((t) => t.names.join(',')), outputs: got.model.outputs.map((t) => t.names.join(',')) };
  };

  it('finds a Parameter whose tag straddles two read chunks, and one whose name holds the word Result', () => {
    const head = '<?xml version="1.0"?>\n<net name="m" version="11">\n<layers>\n';
    // The reader reads 256 KiB at a time: a comment pushes the second Parameter's tag across that boundary.
    const pad = `<!--${'x'.repeat(256 * 1024 - head.length - parameter(0, 'Result_like').length - 20)}-->`;
    const text = ir(
      parameter(0, 'Result_like') + pad + parameter(1, 'second') + relu(2, 'out') + result(3),
      '<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>\n<edge from-layer="2" from-port="1" to-layer="3" to-port="0"/>\n',
    );
    const at = text.indexOf('<layer id="1"');
    expect(at).toBeLessThan(256 * 1024);
    expect(at + 60).toBeGreaterThan(256 * 1024);
    expect(read(text)).toEqual({ inputs: ['Result_like', 'second'], outputs: ['out'] });
  });

  it("leaves out the Parameters and Results of a sub-graph's body (TensorIterator, Loop), and its edges", () => {
    const body =
      `<layer id="4" name="loop" type="TensorIterator" version="opset1"><input>${port(0, '', [1, 4])}</input>` +
      `<output>${port(1, 'loop_out', [1, 4])}</output><body><layers>\n${parameter(0, 'inner_in')}${relu(1, 'inner_mid')}` +
      `${result(3)}</layers><edges><edge from-layer="1" from-port="1" to-layer="3" to-port="0"/></edges></body></layer>\n`;
    const text = ir(
      parameter(0, 'x') + body + relu(2, 'y') + result(3),
      '<edge from-layer="0" from-port="0" to-layer="4" to-port="0"/>\n<edge from-layer="2" from-port="1" to-layer="3" to-port="0"/>\n',
    );
    expect(read(text)).toEqual({ inputs: ['x'], outputs: ['y'] });
  });

  it('reads an IR written by hand with single quotes and spaces around =, as OpenVINO does', () => {
    const text = ir(
      parameter(0, 'x') + relu(2, 'y') + `<layer type='Result' name = 'sink' id='3'><input>${port(0, '', [1, 4])}</input></layer>\n`,
      "<edge from-layer='2' from-port='1' to-layer = '3' to-port='0'/>\n",
    ).replace('<layer id="2" name="relu2"', '<layer  name="relu2" id = "2"');
    expect(read(text)).toEqual({ inputs: ['x'], outputs: ['y'] });
  });
});

describe('OpenVINO IR reader on hostile or odd files: a clear reason, and never much more read than the file', () => {
  const port = (id: number, names: string) =>
    `<port id="${id}" precision="FP32"${names ? ` names="${names}"` : ''}><dim>1</dim></port>`;
  const parameter = (id: number, name: string, extra = '') =>
    `<layer id="${id}" name="${name}" type="Parameter" version="opset1"${extra}><data shape="1" element_type="f32"/>` +
    `<output>${port(0, name)}</output></layer>\n`;
  const relu = (id: number, names: string) =>
    `<layer id="${id}" name="relu${id}" type="ReLU" version="opset1"><input>${port(0, '')}</input>` +
    `<output>${port(1, names)}</output></layer>\n`;
  const result = (id: number) =>
    `<layer id="${id}" name="sink${id}" type="Result" version="opset1"><input>${port(0, '')}</input></layer>\n`;
  const edge = (from: number, to: number) =>
    `<edge from-layer="${from}" from-port="${from === 0 ? 0 : 1}" to-layer="${to}" to-port="0"/>\n`;
  const neverEnds = (text: string) => ({
    ok: false,
    reason: `is not an OpenVINO IR: its <layer> tag at byte ${text.indexOf('<layer id="0"')} does not end (no ">" within 1 MiB)`,
  });
  const ir = (layers: string, edges: string) =>
    `<?xml version="1.0"?>\n<net name="m" version="11">\n<layers>\n${layers}</layers>\n<edges>\n${edges}</edges>\n</net>\n`;
  /** Reads `text`, and says how many bytes the reader read, as a multiple of the file's size. */
  const counted = (text: string) => {
    const b = Buffer.from(text);
    let read = 0;
    const got = readOpenVinoModel({
      size: b.length,
      read: (buffer, length, position) => {
        const n = b.copy(buffer, 0, position, position + length);
        read += n;
        return n;
      },
    });
    return { got, times: read / b.length };
  };
  const names = (got: ReturnType<typeof readOpenVinoModel>) => {
    if (!got.ok) throw new Error(got.reason);
    return { inputs: got.model.inputs.map((t) => t.names.join(',')), outputs: got.model.outputs.map((t) => t.names.join(',')) };
  };

  it('refuses a Parameter whose start tag never ends, naming the byte where it starts', () => {
    const head = ir(parameter(0, 'x') + relu(1, 'y') + result(2), edge(0, 1) + edge(1, 2));
    // A quote left open swallows the rest of the file: the tag has no end, as OpenVINO's XML parser finds too.
    const text = head.replace('name="x"', 'name="x').replace('</net>', `${' '.repeat(10)}</net>`);
    const { got } = counted(text);
    expect(got).toEqual(neverEnds(text));
  });

  it('refuses a layer tag of more than 1 MiB, reading about the file once', () => {
    const text = ir(parameter(0, 'x', ` note="${'a'.repeat(1200 * 1024)}"`) + relu(1, 'y') + result(2), edge(0, 1) + edge(1, 2));
    const { got, times } = counted(text);
    expect(got).toEqual(neverEnds(text));
    expect(times).toBeLessThan(2.5);
  });

  it('reads a tag whose quoted value holds ">", and a comment with quotes and the words Parameter and Result', () => {
    const comment = `<!-- don't read this as a layer: type="Parameter" type="Result" -->\n`;
    const text = ir(comment + parameter(0, 'a->b') + relu(1, 'y') + comment + result(2), edge(0, 1) + edge(1, 2));
    expect(names(counted(text).got)).toEqual({ inputs: ['a->b'], outputs: ['y'] });
  });

  it('takes the end of a Parameter that lacks </layer> from the next layer', () => {
    const text = ir(parameter(0, 'x').replace('</layer>', '') + relu(1, 'y') + result(2), edge(0, 1) + edge(1, 2));
    expect(names(counted(text).got)).toEqual({ inputs: ['x'], outputs: ['y'] });
  });

  it('refuses a Parameter layer that runs on for more than 1 MiB without </layer>', () => {
    const text = ir(parameter(0, 'x').replace('</layer>', '<dim>1</dim>'.repeat(100 * 1024)) + result(2), edge(0, 2));
    expect(counted(text).got).toEqual({
      ok: false,
      reason: `is not an OpenVINO IR: its layer at byte ${text.indexOf('<layer id="0"')} runs on for more than 1 MiB without </layer>`,
    });
  });

  it('stays linear on a file full of the words it looks for, outside any tag and inside one long comment', () => {
    const words = 'Param Result body> '.repeat(200 * 1024);
    const text = ir(`${parameter(0, 'x')}<!--${words}-->\n${relu(1, 'y')}${result(2)}`, edge(0, 1) + edge(1, 2)).replace(
      '<layers>',
      `<layers><data>${words}</data>`,
    );
    expect(text.length).toBeGreaterThan(7 * 1024 * 1024);
    const { got, times } = counted(text);
    expect(names(got)).toEqual({ inputs: ['x'], outputs: ['y'] });
    expect(times).toBeLessThan(2);
  });

  it('reads many Results from one index once looking them up one at a time has cost twice the file', () => {
    const count = 400;
    let layers = parameter(0, 'x');
    let edges = '';
    // Each Result's producer sits at the start, far from it: each lookup searches back over most of the file.
    for (let i = 1; i <= count; i++) layers += relu(i, `y${i}`);
    layers += `<!--${'pad '.repeat(64 * 1024)}-->\n`;
    for (let i = 1; i <= count; i++) {
      layers += result(count + i);
      edges += edge(0, i) + edge(i, count + i);
    }
    const { got, times } = counted(ir(layers, edges));
    expect(names(got).outputs).toEqual(Array.from({ length: count }, (_, i) => `y${i + 1}`));
    expect(times).toBeLessThan(8);
  });
});
