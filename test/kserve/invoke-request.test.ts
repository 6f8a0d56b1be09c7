import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseModelConfig } from '../../lib/config/parse';
import { buildInvokeRequest, formatInferenceResponse, inferenceResponseToJson, topK } from '../../lib/kserve/invoke-request';
import { readInvokeModelConfig } from '../../lib/aws/invoke-model-config';
import { decodeInferenceRequest } from '../../lib/kserve/kserve-codec';
import { MmeError } from '../../lib/errors';
import { exitCodeOf } from '../../lib/cli/exit-codes';

// A line ending in \ goes on at the start of the next (a template literal's line continuation): no line break there.
const IMAGE_ENSEMBLE = `name: "ensemble_dali_inception"
platform: "ensemble"
max_batch_size: 256
input [ { name: "INPUT" data_type: TYPE_UINT8 dims: [ -1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1001 ] } ]
ensemble_scheduling { step [ { model_name: "dali" model_version: -1 input_map { key: "DALI_INPUT_0" value: "INPUT" } \
output_map { key: "DALI_OUTPUT_0" value: "OUTPUT" } } ] }
`;
const SENTENCE_ENSEMBLE = `name: "ensemble"
platform: "ensemble"
max_batch_size: 16
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "finaloutput" data_type: TYPE_FP32 dims: [ 384 ] } ]
`;
const RESNET = `name: "resnet"
platform: "pytorch_libtorch"
max_batch_size: 128
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 3, 2, 2 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1000 ] } ]
`;
const NO_BATCH = `name: "adder"
backend: "python"
input [ { name: "A" data_type: TYPE_INT64 dims: [ 2 ] }, { name: "B" data_type: TYPE_BOOL dims: [ -1 ] optional: true } ]
output [ { name: "SUM" data_type: TYPE_INT64 dims: [ 2 ] } ]
`;

const config = (text: string) => parseModelConfig(text).config;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'invoke-request-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('building an invoke request from command-line inputs', () => {
  it('sends an image file as one UINT8 tensor [1, n], as seed 000 sends the JPEG', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]);
    writeFileSync(join(dir, 'dog.jpg'), jpeg);
    const { body, contentType } = await buildInvokeRequest({ inputs: ['INPUT=@dog.jpg'], binary: true }, config(IMAGE_ENSEMBLE), {
      cwd: dir,
    });
    const header =
      '{"parameters":{"binary_data_output":true},' +
      '"inputs":[{"name":"INPUT","shape":[1,6],"datatype":"UINT8","parameters":{"binary_data_size":6}}]}';
    expect(contentType).toBe(`application/vnd.sagemaker-triton.binary+json;json-header-size=${header.length}`);
    expect(body).toEqual(Buffer.concat([Buffer.from(header), jpeg]));
  });

  it('sends the same image as JSON data without --binary', async () => {
    writeFileSync(join(dir, 'dog.jpg'), Buffer.from([1, 2, 255]));
    const { body, contentType } = await buildInvokeRequest({ inputs: ['INPUT=@dog.jpg'] }, config(IMAGE_ENSEMBLE), { cwd: dir });
    expect(contentType).toBe('application/json');
    expect(body.toString()).toBe(
      '{"parameters":{"binary_data_output":true},"inputs":[{"name":"INPUT","shape":[1,3],"datatype":"UINT8","data":[1,2,255]}]}',
    );
  });

  it('sends sentences as BYTES with the batch dim prepended, a batch when repeated', async () => {
    const { body } = await buildInvokeRequest({ texts: ['INPUT0=Hello there', 'INPUT0=Bonjour'] }, config(SENTENCE_ENSEMBLE));
    expect(body.toString()).toBe(
      '{"parameters":{"binary_data_output":true},' +
        '"inputs":[{"name":"INPUT0","shape":[2,1],"datatype":"BYTES","data":["Hello there","Bonjour"]}]}',
    );
  });

  it('shapes a flat JSON array from the config and a nested one from its nesting', async () => {
    writeFileSync(join(dir, 'flat.json'), JSON.stringify(Array.from({ length: 12 }, (_, i) => i / 2)));
    writeFileSync(join(dir, 'nested.json'), JSON.stringify([[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]]));
    const flat = await buildInvokeRequest({ inputs: ['INPUT__0=@flat.json'], binary: true }, config(RESNET), { cwd: dir });
    const nested = await buildInvokeRequest({ inputs: ['INPUT__0=@nested.json'], binary: true }, config(RESNET), { cwd: dir });
    expect(decodeInferenceRequest(flat.body, flat.contentType).inputs[0]!.shape).toEqual([1, 3, 2, 2]);
    const decoded = decodeInferenceRequest(nested.body, nested.contentType).inputs[0]!;
    expect(decoded.shape).toEqual([1, 3, 2, 2]);
    expect(decoded.data).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('takes shape and datatype from --shape/--datatype when there is no config', async () => {
    const { body } = await buildInvokeRequest({ inputs: ['X=[1,2,3,4]', 'Y=[5]'], shape: 'X=2x2', datatype: 'X=int16 Y=fp64' });
    expect(body.toString()).toBe(
      '{"parameters":{"binary_data_output":true},' +
        '"inputs":[{"name":"X","shape":[2,2],"datatype":"INT16","data":[1,2,3,4]},{"name":"Y","shape":[1],"datatype":"FP64","data":[5]}]}',
    );
  });

  it('accepts a KServe tensor object in the JSON file', async () => {
    writeFileSync(join(dir, 't.json'), JSON.stringify({ shape: [2], datatype: 'INT64', data: ['9007199254740993', 2] }));
    const { body } = await buildInvokeRequest({ inputs: ['A=@t.json'] }, config(NO_BATCH), { cwd: dir });
    expect(body.toString()).toBe(
      '{"parameters":{"binary_data_output":true},"inputs":[{"name":"A","shape":[2],"datatype":"INT64","data":[9007199254740993,2]}]}',
    );
  });

  it('asks only for the named outputs, in binary with --binary', async () => {
    const { body, contentType } = await buildInvokeRequest({ inputs: ['A=[1,2]'], outputs: ['SUM'], binary: true }, config(NO_BATCH));
    const header = JSON.parse(body.subarray(0, Number(/=(\d+)$/.exec(contentType)![1])).toString());
    expect(header.outputs).toEqual([{ name: 'SUM', parameters: { binary_data: true } }]);
  });

  it('reads --body as-is', async () => {
    writeFileSync(join(dir, 'request.json'), '{"inputs": []}\n');
    const { body, contentType } = await buildInvokeRequest({ body: 'request.json' }, undefined, { cwd: dir });
    expect([body.toString(), contentType]).toEqual(['{"inputs": []}\n', 'application/json']);
  });
});

describe('invoke request errors', () => {
  const cases: [string, Parameters<typeof buildInvokeRequest>[0], string, RegExp][] = [
    [
      'an unknown input name',
      { inputs: ['IMAGE=[1]'] },
      IMAGE_ENSEMBLE,
      /Model 'ensemble_dali_inception' has no input 'IMAGE'; its inputs are 'INPUT' \(UINT8 \[-1, -1\]\)/,
    ],
    ['a missing required input', { inputs: ['B=[true]'] }, NO_BATCH, /The model also needs 'A' \(INT64 \[2\]\)/],
    [
      'a datatype contradicting the config',
      { inputs: ['A=[1,2]'], datatype: 'FP32' },
      NO_BATCH,
      /'A' is INT64 in the model config, but FP32 was given/,
    ],
    [
      'data that does not fit the shape',
      { inputs: ['A=[1,2,3]'] },
      NO_BATCH,
      /has 3 values, but shape \[2\] from the model config holds 2: the dims must multiply/,
    ],
    ['an unknown output', { inputs: ['A=[1,2]'], outputs: ['MEAN'] }, NO_BATCH, /no output 'MEAN'; its outputs are 'SUM'/],
    ['an input without NAME=', { inputs: ['@dog.jpg'] }, NO_BATCH, /must look like NAME=value/],
    ['a missing file', { inputs: ['A=@nope.json'] }, NO_BATCH, /nope.json does not exist/],
    ['--body with inputs', { body: 'r.json', inputs: ['A=[1]'] }, NO_BATCH, /cannot be combined/],
    ['a bad --datatype', { inputs: ['X=[1]'], datatype: 'FLOAT' }, '', /is not a datatype; use one of BOOL, UINT8/],
  ];

  it.each(cases.map(([what, spec, text, message]) => ({ what, spec, text, message })))(
    'explains $what',
    async ({ spec, text, message }) => {
      const promise = buildInvokeRequest(spec, text ? config(text) : undefined, { cwd: dir });
      await expect(promise).rejects.toThrow(message);
      const err = await promise.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MmeError);
      expect(exitCodeOf((err as MmeError).code)).toBe(2);
    },
  );

  it('refuses raw bytes for a float input', async () => {
    writeFileSync(join(dir, 'x.bin'), Buffer.alloc(48));
    await expect(buildInvokeRequest({ inputs: ['INPUT__0=@x.bin'] }, config(RESNET), { cwd: dir })).rejects.toThrow(
      /Input 'INPUT__0' is FP32, but x.bin is not a .json file/,
    );
  });
});

describe('reading the served model config from an archive or directory', () => {
  function repository(models: Record<string, string>): string {
    const root = join(dir, 'repo');
    for (const [name, text] of Object.entries(models)) {
      mkdirSync(join(root, name, '1'), { recursive: true });
      writeFileSync(join(root, name, 'config.pbtxt'), text);
    }
    return root;
  }

  it('picks the ensemble from a tar.gz made like the AWS examples (tar -C repo -czf x.tar.gz .)', async () => {
    const root = repository({
      dali: 'name: "dali"\nbackend: "dali"\n',
      ensemble_dali_inception: IMAGE_ENSEMBLE,
      inception: 'platform: "tensorflow_graphdef"',
    });
    const archive = join(dir, 'model_tf_dali.tar.gz');
    execFileSync('tar', ['-C', root, '-czf', archive, '.']);
    const found = await readInvokeModelConfig(archive);
    expect(found.model).toBe('ensemble_dali_inception');
    expect(found.config.input?.[0]?.name).toBe('INPUT');
    expect(found.source).toBe(`${archive}:ensemble_dali_inception/config.pbtxt`);
  });

  it('uses a config.pbtxt at the root of a directory', async () => {
    const root = repository({ resnet: RESNET });
    const found = await readInvokeModelConfig(join(root, 'resnet'));
    expect([found.model, found.config.name]).toEqual(['.', 'resnet']);
  });

  it('refuses a repository where SageMaker\'s choice would depend on readdir order', async () => {
    const root = repository({ a: RESNET, b: NO_BATCH });
    await expect(readInvokeModelConfig(root)).rejects.toThrow(/2 directories \(a, b\) and no ensemble; SageMaker would serve whichever/);
  });
});

describe('showing a response', () => {
  const response = {
    model_name: 'resnet.tar.gz',
    model_version: '1',
    outputs: [
      {
        name: 'OUTPUT__0',
        datatype: 'FP32' as const,
        shape: [1, 20],
        data: Array.from({ length: 20 }, (_, i) => (i === 7 ? 0.9 : i / 100)),
      },
      { name: 'LABEL', datatype: 'BYTES' as const, shape: [1], data: [Buffer.from('shiba inu')] },
      { name: 'BIG', datatype: 'INT64' as const, shape: [1], data: [2n ** 62n] },
    ],
  };

  it('prints each tensor with its dtype, shape, elided values and top-k', () => {
    expect(formatInferenceResponse(response, { top: 3 })).toBe(
      [
        'model resnet.tar.gz (version 1)',
        'OUTPUT__0  FP32 [1, 20]',
        '  values: [0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.9, 0.08, 0.09, 0.1, 0.11, … 4 more …, 0.16, 0.17, 0.18, 0.19]',
        '  top 3:',
        '         7  0.9',
        '        19  0.19',
        '        18  0.18',
        'LABEL  BYTES [1]',
        '  values: ["shiba inu"]',
        'BIG  INT64 [1]',
        '  values: [4611686018427387904]',
        '',
      ].join('\n'),
    );
  });

  it('ranks top-k per batch row', () => {
    expect(topK([3, 1, 2], 2)).toEqual([
      { index: 0, value: 3 },
      { index: 2, value: 2 },
    ]);
    const text = formatInferenceResponse(
      { outputs: [{ name: 'P', datatype: 'FP32', shape: [2, 2], data: [0.1, 0.9, 0.8, 0.2] }] },
      { top: 1 },
    );
    expect(text).toContain('  top 1 (row 0):\n         1  0.9\n  top 1 (row 1):\n         0  0.8');
  });

  it('gives JSON with exact 64-bit integers and text for bytes', () => {
    const json = inferenceResponseToJson(response) as { outputs: { data: unknown[] }[] };
    expect(json.outputs[1]!.data).toEqual(['shiba inu']);
    expect(json.outputs[2]!.data).toEqual(['4611686018427387904']);
  });
});

describe('FP16 and BF16 in the default mode', () => {
  const HALF = `name: "half"
backend: "tensorrt"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP16 dims: [ 2 ] } ]
output [ { name: "Y" data_type: TYPE_BF16 dims: [ 2 ] }, { name: "N" data_type: TYPE_FP32 dims: [ 1 ] } ]
`;
  const FLOAT_IN_HALF_OUT = `name: "mixed"
backend: "onnxruntime"
input [ { name: "X" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "Y" data_type: TYPE_FP16 dims: [ 2 ] }, { name: "N" data_type: TYPE_FP32 dims: [ 1 ] } ]
`;
  const header = (encoded: { body: Buffer; contentType: string }) =>
    JSON.parse(encoded.body.subarray(0, Number(/json-header-size=(\d+)/.exec(encoded.contentType)![1])).toString());

  it('sends an FP16 input as binary+json and asks for binary outputs, without --binary', async () => {
    const encoded = await buildInvokeRequest({ inputs: ['X=[1.5,-0]'] }, config(HALF));
    expect(encoded.contentType).toMatch(/^application\/vnd\.sagemaker-triton\.binary\+json;json-header-size=\d+$/);
    expect(header(encoded).parameters).toEqual({ binary_data_output: true });
    const input = decodeInferenceRequest(encoded.body, encoded.contentType).inputs[0]!;
    expect([input.datatype, input.shape]).toEqual(['FP16', [1, 2]]);
    expect(input.data[0]).toBe(1.5);
    expect(Object.is(input.data[1], -0)).toBe(true);
  });

  it('sends JSON inputs and asks for every output in binary, so an FP16 output comes back whole', async () => {
    const encoded = await buildInvokeRequest({ inputs: ['X=[1,2]'] }, config(FLOAT_IN_HALF_OUT));
    expect(encoded.contentType).toBe('application/json');
    expect(JSON.parse(encoded.body.toString()).parameters).toEqual({ binary_data_output: true });
    const onlyN = await buildInvokeRequest({ inputs: ['X=[1,2]'], outputs: ['N'] }, config(FLOAT_IN_HALF_OUT));
    expect(JSON.parse(onlyN.body.toString()).outputs).toEqual([{ name: 'N', parameters: { binary_data: true } }]);
    const json = await buildInvokeRequest({ inputs: ['X=[1,2]'], outputs: ['N'], binary: false }, config(FLOAT_IN_HALF_OUT));
    expect(JSON.parse(json.body.toString()).outputs).toEqual([{ name: 'N' }]);
  });

  it('refuses a scalar input file ({"shape": []}) with the fix, and a raw file over the limit unread', async () => {
    writeFileSync(join(dir, 'scalar.json'), '{"shape": [], "datatype": "FP32", "data": [0.5]}');
    await expect(buildInvokeRequest({ inputs: ['T=@scalar.json'] }, undefined, { cwd: dir })).rejects.toMatchObject({
      code: 'BAD_SHAPE',
      message: expect.stringContaining('Send it with shape [1]'),
    });
    writeFileSync(join(dir, 'big.jpg'), Buffer.alloc(2048, 1));
    await expect(buildInvokeRequest({ inputs: ['I=@big.jpg'] }, undefined, { cwd: dir, maxBytes: 1024 })).rejects.toMatchObject({
      bytes: 2048,
      maxBytes: 1024,
    });
  });

  it('goes binary for --datatype BF16 without a config, and stays JSON for FP32', async () => {
    expect((await buildInvokeRequest({ inputs: ['X=[1,2]'], datatype: 'bf16' })).contentType).toMatch(/binary\+json/);
    expect((await buildInvokeRequest({ inputs: ['X=[1,2]'], datatype: 'FP32' })).contentType).toBe('application/json');
  });

  it('refuses --no-binary for an FP16 input or output before sending, quoting Triton', async () => {
    const input = buildInvokeRequest({ inputs: ['X=[1,2]'], binary: false }, config(HALF));
    await expect(input).rejects.toThrow(
      "Input 'X' is FP16, which Triton refuses as JSON (\"receiving FP16 data via JSON is not supported. " +
        'Please use the binary data format for input X"). Drop --no-binary',
    );
    await expect(input).rejects.toMatchObject({ code: 'USAGE' });
    await expect(buildInvokeRequest({ inputs: ['X=[1,2]'], binary: false }, config(FLOAT_IN_HALF_OUT))).rejects.toThrow(
      new RegExp(
        /Output 'Y' is FP16, which Triton refuses to send as JSON \("sending FP16 data via JSON is not supported\. /.source +
          /Please use the binary data format for output"\)\. Drop --no-binary, or ask only for other /.source +
          /outputs with --output/.source,
      ),
    );
    const onlyN = await buildInvokeRequest({ inputs: ['X=[1,2]'], outputs: ['N'], binary: false }, config(FLOAT_IN_HALF_OUT));
    expect(onlyN.contentType).toBe('application/json');
  });
});

describe('ragged nested arrays', () => {
  const cases: [string, string][] = [
    ['[[1,2],[3]]', "input 'X' is a ragged array: [1] is a row of 1 value but [0] is a row of 2 values."],
    ['[[1,2],3]', "input 'X' is a ragged array: [1] is a single value but [0] is a row of 2 values."],
    ['[[[1,2],[3,4]],[[5,6],[7]]]', "input 'X' is a ragged array: [1][1] is a row of 1 value but [1][0] is a row of 2 values."],
    ['[[[1],[2]],[[3]]]', "input 'X' is a ragged array: [1] is a 1×1 array but [0] is a 2×1 array."],
    ['[[1,2],[]]', "input 'X' is a ragged array: [1] is a row of 0 values but [0] is a row of 2 values."],
  ];

  it.each(cases)('refuses %s, naming the row', async (array, message) => {
    const promise = buildInvokeRequest({ inputs: [`X=${array}`] });
    await expect(promise).rejects.toThrow(`--input X: ${message} A tensor is rectangular`);
    await expect(promise).rejects.toMatchObject({ code: 'BAD_SHAPE' });
  });

  it('names the file a ragged array came from', async () => {
    writeFileSync(join(dir, 'rows.json'), '[[0.1, 0.2, 0.3], [0.4, 0.5]]');
    await expect(buildInvokeRequest({ inputs: ['X=@rows.json'] }, undefined, { cwd: dir })).rejects.toThrow(
      "rows.json: input 'X' is a ragged array: [1] is a row of 2 values but [0] is a row of 3 values.",
    );
  });

  it('still takes rectangular nestings of any depth, and empty rows alike', async () => {
    const { body } = await buildInvokeRequest({ inputs: ['X=[[[1],[2]],[[3],[4]]]', 'E=[[],[]]'] });
    expect(body.toString()).toContain('{"name":"X","shape":[2,2,1],"datatype":"FP32","data":[1,2,3,4]}');
    expect(body.toString()).toContain('{"name":"E","shape":[2,0],"datatype":"FP32","data":[]}');
  });
});

describe('negative zero in a response', () => {
  it('is shown as -0, and kept as "-0" in --json', () => {
    const response = { outputs: [{ name: 'Z', datatype: 'FP32' as const, shape: [2], data: [-0, 0] }] };
    expect(formatInferenceResponse(response)).toContain('values: [-0, 0]');
    expect((inferenceResponseToJson(response) as { outputs: { data: unknown[] }[] }).outputs[0]!.data).toEqual(['-0', 0]);
  });
});
