// The requests smoke makes from a config: Triton's model_warmup samples as Triton builds them
// (core src/backend_model_instance.cc GenerateWarmupData), else values made per data type and dims.

import { parseModelConfig } from '../../lib/config/parse';
import { smokeRequests } from '../../lib/measure/smoke-inputs';

const config = (text: string) => parseModelConfig(text).config;
const files = (entries: Record<string, Buffer> = {}) => new Map(Object.entries(entries));

const WARMUP = (inputs: string, batch = 1) => `name: "m"
backend: "onnxruntime"
max_batch_size: 4
input [ { name: "A" data_type: TYPE_STRING dims: [ 2 ] }, { name: "B" data_type: TYPE_INT16 dims: [ 3 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
model_warmup [ { name: "w" batch_size: ${batch} ${inputs} } ]
`;

describe('smoke requests', () => {
  it('sends random STRING data as empty strings and random numbers as bytes of the type, shape [1] + dims', () => {
    const [request] = smokeRequests(config(WARMUP(
      'inputs { key: "A" value: { data_type: TYPE_STRING dims: [ 2 ] random_data: true } } ' +
        'inputs { key: "B" value: { data_type: TYPE_INT16 dims: [ 3 ] random_data: true } }',
    )), files(), { random: () => 0.5 });
    expect(request!.source).toBe("warmup 'w'");
    const [a, b] = request!.inputs;
    expect(a).toMatchObject({ name: 'A', datatype: 'BYTES', shape: [1, 2] });
    expect(a!.data.map((e) => (e as Uint8Array).length)).toEqual([0, 0]);
    // Every byte 128: 0x8080 as a little-endian INT16.
    expect(b).toMatchObject({ name: 'B', datatype: 'INT16', shape: [1, 3], data: [-32640, -32640, -32640] });
  });

  it('reads input_data_file from warmup/: serialized strings whole, numbers from the first bytes', () => {
    const strings = Buffer.concat([Buffer.from([2, 0, 0, 0]), Buffer.from('hi'), Buffer.from([3, 0, 0, 0]), Buffer.from('yes')]);
    const numbers = Buffer.from([1, 0, 2, 0, 3, 0, 9, 9]);
    const [request] = smokeRequests(config(WARMUP(
      'inputs { key: "A" value: { data_type: TYPE_STRING dims: [ 2 ] input_data_file: "a.bin" } } ' +
        'inputs { key: "B" value: { data_type: TYPE_INT16 dims: [ 3 ] input_data_file: "b.bin" } }',
    )), files({ 'warmup/a.bin': strings, 'warmup/b.bin': numbers }));
    expect(request!.inputs[0]!.data.map((e) => Buffer.from(e as Uint8Array).toString())).toEqual(['hi', 'yes']);
    expect(request!.inputs[1]!.data).toEqual([1, 2, 3]);
  });

  it("refuses a file shorter than the input, with Triton's words", () => {
    const text = WARMUP('inputs { key: "B" value: { data_type: TYPE_INT16 dims: [ 3 ] input_data_file: "b.bin" } }');
    expect(() => smokeRequests(config(text), files({ 'warmup/b.bin': Buffer.alloc(4) }))).toThrow(
      "model_warmup 'w': warmup setting expects 6 bytes, but the data provided from b.binonly has 4 bytes",
    );
    expect(() => smokeRequests(config(text), files())).toThrow('failed to open text file for read warmup/b.bin');
  });

  it('refuses variable dims in a warmup sample and a sample without data', () => {
    const variable = WARMUP('inputs { key: "B" value: { data_type: TYPE_INT16 dims: [ -1 ] zero_data: true } }');
    expect(() => smokeRequests(config(variable), files()))
      .toThrow("warmup setting expects all variable-size dimensions are specified for input 'B'");
    expect(() => smokeRequests(config(WARMUP('inputs { key: "B" value: { data_type: TYPE_INT16 dims: [ 3 ] } }')), files()))
      .toThrow("warmup setting expects input 'B' to have input_data_type set");
  });

  it('skips batch_size 0 samples, as Triton does, and then generates values for every required input', () => {
    const [request] = smokeRequests(config(WARMUP('inputs { key: "B" value: { data_type: TYPE_INT16 dims: [ 3 ] zero_data: true } }', 0)),
      files({ 'A.sample': Buffer.from('a sentence') }));
    expect(request!.source).toBe('generated');
    const [a, b] = request!.inputs;
    expect(a).toMatchObject({ datatype: 'BYTES', shape: [1, 2] });
    expect(a!.data.map((e) => Buffer.from(e as Uint8Array).toString())).toEqual(['a sentence', 'a sentence']);
    expect(b).toMatchObject({ datatype: 'INT16', shape: [1, 3], data: [0, 1, 2] });
  });
});
