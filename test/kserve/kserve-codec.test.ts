import {
  KServeDatatype,
  TensorElement,
  bfloat16Bits,
  bfloat16Value,
  binaryJsonContentType,
  decodeInferenceRequest,
  decodeInferenceResponse,
  decodeTensorData,
  encodeInferenceRequest,
  encodeTensorData,
  float16Bits,
  float16Value,
  jsonCarries,
  parseJsonExact,
  RequestTooLargeError,
} from '../../lib/kserve/kserve-codec';
import fc from 'fast-check';
import { MmeError } from '../../lib/errors';

const BINARY_MIME = 'application/vnd.sagemaker-triton.binary+json';
const hex = (buffer: Uint8Array) => Buffer.from(buffer).toString('hex');

describe('binary tensor data (little-endian, row-major, no padding)', () => {
  const vectors: [KServeDatatype, TensorElement[], string, TensorElement[]?][] = [
    ['BOOL', [true, false, true], '010001'],
    ['UINT8', [0, 255, 7], '00ff07'],
    ['UINT16', [1, 0xabcd], '0100cdab'],
    ['UINT32', [1, 0xdeadbeef], '01000000efbeadde'],
    ['UINT64', [1n, 0xffffffffffffffffn], '0100000000000000ffffffffffffffff'],
    ['INT8', [-1, 127, -128], 'ff7f80'],
    ['INT16', [-2, 0x1234], 'feff3412'],
    ['INT32', [-1, 0x01020304], 'ffffffff04030201'],
    ['INT64', [-2n, 0x0102030405060708n], 'feffffffffffffff0807060504030201'],
    ['FP16', [1, -2, 65504, 2 ** -24, Infinity, -0], '003c00c0ff7b0100007c0080'],
    ['BF16', [1, -2, 0.1, -Infinity], '803f00c0cd3d80ff', [1, -2, 0.10009765625, -Infinity]],
    ['FP32', [1.5, -0.25], '0000c03f000080be'],
    ['FP64', [1.5, -2], '000000000000f83f00000000000000c0'],
    ['BYTES', ['ab', '', 'é'], '02000000616200000000' + '02000000c3a9', [Buffer.from('ab'), Buffer.alloc(0), Buffer.from('é')]],
  ];

  it.each(vectors.map(([datatype, values, expected, decoded]) => ({ datatype, values, expected, decoded })))(
    'encodes $datatype byte for byte and decodes it back',
    ({ datatype, values, expected, decoded }) => {
    const bytes = encodeTensorData(datatype, values);
    expect(hex(bytes)).toBe(expected);
    const back = decodeTensorData(datatype, bytes, values.length);
    const want = decoded ?? values;
    expect(back.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))).toEqual(
      want.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)),
    );
    },
  );

  it('encodes a BYTES batch with a 4-byte little-endian length before each element', () => {
    const long = 'x'.repeat(300);
    const bytes = encodeTensorData('BYTES', ['hello world', long, Buffer.from([0, 255])]);
    expect(bytes.length).toBe(4 + 11 + 4 + 300 + 4 + 2);
    expect(hex(bytes.subarray(0, 4))).toBe('0b000000');
    expect(hex(bytes.subarray(15, 19))).toBe('2c010000');
    expect(hex(bytes.subarray(319))).toBe('020000' + '0000ff');
  });

  it('accepts 64-bit integers as decimal strings and refuses unsafe JSON numbers', () => {
    expect(hex(encodeTensorData('INT64', ['9007199254740993']))).toBe('0100000000002000');
    expect(() => encodeTensorData('INT64', [2 ** 60], 'ids')).toThrow(/element 0 of tensor 'ids'.*write it as a string/);
  });

  it('refuses values outside the datatype range, naming the tensor and element', () => {
    expect(() => encodeTensorData('UINT8', [1, 256], 'pixels')).toThrow(
      "element 1 of tensor 'pixels' is 256, outside the UINT8 range 0..255.",
    );
    expect(() => encodeTensorData('INT32', [1.5], 'x')).toThrow(/needs an integer/);
    expect(() => encodeTensorData('BOOL', [2], 'm')).toThrow(/BOOL needs true, false, 0 or 1/);
  });

  it('refuses data whose length does not match the shape', () => {
    expect(() => decodeTensorData('FP32', Buffer.alloc(12), 4, 'out')).toThrow(
      "Tensor 'out' (FP32) has 12 bytes of data; expected 16 (4 × 4).",
    );
    expect(() => decodeTensorData('BYTES', Buffer.from('05000000616263', 'hex'), 1, 's')).toThrow(/declares 5 bytes but only 3 remain/);
  });
});

describe('FP16 and BF16 conversions', () => {
  it('rounds half to even between neighbouring FP16 values', () => {
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00);
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(float16Bits(0.1)).toBe(0x2e66);
  });

  it('overflows to infinity only past the halfway point above the FP16 maximum', () => {
    expect(float16Bits(65519.99)).toBe(0x7bff);
    expect(float16Bits(65520)).toBe(0x7c00);
    expect(float16Bits(-1e6)).toBe(0xfc00);
  });

  it('produces subnormals and rounds them half to even', () => {
    expect(float16Bits(2 ** -14)).toBe(0x0400);
    expect(float16Bits(1023 * 2 ** -24)).toBe(0x03ff);
    expect(float16Bits(2 ** -25)).toBe(0x0000);
    expect(float16Bits(3 * 2 ** -25)).toBe(0x0002);
    expect(float16Bits(1023.5 * 2 ** -24)).toBe(0x0400);
    expect(float16Value(0x0001)).toBe(2 ** -24);
    expect(float16Value(0x83ff)).toBe(-1023 * 2 ** -24);
  });

  it('keeps NaN and infinities', () => {
    expect(float16Bits(NaN)).toBe(0x7e00);
    expect(float16Value(0x7e00)).toBeNaN();
    expect(float16Value(0xfc00)).toBe(-Infinity);
    expect(bfloat16Bits(NaN)).toBe(0x7fc0);
    expect(bfloat16Value(0x7fc1)).toBeNaN();
    expect(bfloat16Value(0x7f80)).toBe(Infinity);
  });

  it('rounds BF16 from the double directly, overflowing the FP32 maximum to infinity', () => {
    expect(bfloat16Bits(3.4028234663852886e38)).toBe(0x7f80);
    expect(bfloat16Bits(3.3895313892515355e38)).toBe(0x7f7f);
    expect(bfloat16Bits(1 + 2 ** -8)).toBe(0x3f80);
    expect(bfloat16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(bfloat16Bits(2 ** -133)).toBe(0x0001);
    expect(bfloat16Bits(2 ** -134)).toBe(0x0000);
    expect(bfloat16Value(0x0001)).toBe(2 ** -133);
  });

  it('round-trips every finite FP16 and BF16 bit pattern', () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const f16 = float16Value(bits);
      if (!Number.isNaN(f16) && float16Bits(f16) !== bits) throw new Error(`FP16 0x${bits.toString(16)} does not round-trip`);
      const bf16 = bfloat16Value(bits);
      if (!Number.isNaN(bf16) && bfloat16Bits(bf16) !== bits) throw new Error(`BF16 0x${bits.toString(16)} does not round-trip`);
    }
  });
});

describe('request bodies', () => {
  const request = {
    inputs: [
      { name: 'INPUT0', datatype: 'BYTES' as const, shape: [2, 1], data: ['hi', 'yo!'] },
      { name: 'MASK', datatype: 'INT32' as const, shape: [1, 2], data: [1, -1] },
    ],
  };

  it('writes plain JSON with application/json', () => {
    const { body, contentType } = encodeInferenceRequest(request, { binary: false });
    expect(contentType).toBe('application/json');
    expect(body.toString()).toBe(
      '{"inputs":[{"name":"INPUT0","shape":[2,1],"datatype":"BYTES","data":["hi","yo!"]},' +
        '{"name":"MASK","shape":[1,2],"datatype":"INT32","data":[1,-1]}]}',
    );
  });

  it('writes the SageMaker binary+json framing with binary_data_size per input and binary outputs', () => {
    const { body, contentType } = encodeInferenceRequest({ ...request, outputs: [{ name: 'OUT' }] }, { binary: true });
    const header =
      '{"inputs":[{"name":"INPUT0","shape":[2,1],"datatype":"BYTES","parameters":{"binary_data_size":13}},' +
      '{"name":"MASK","shape":[1,2],"datatype":"INT32","parameters":{"binary_data_size":8}}],' +
      '"outputs":[{"name":"OUT","parameters":{"binary_data":true}}]}';
    expect(contentType).toBe(`application/vnd.sagemaker-triton.binary+json;json-header-size=${Buffer.byteLength(header)}`);
    expect(body.subarray(0, Buffer.byteLength(header)).toString()).toBe(header);
    expect(hex(body.subarray(Buffer.byteLength(header)))).toBe('020000006869' + '03000000796f21' + '01000000ffffffff');
  });

  it('asks for every output in binary with binary_data_output when no output is listed', () => {
    const { body } = encodeInferenceRequest({ inputs: [request.inputs[1]!] }, { binary: true });
    expect(body.toString('latin1')).toMatch(/^\{"parameters":\{"binary_data_output":true\},"inputs":/);
  });

  it('writes 64-bit integers as exact JSON digits, and NaN and the infinities as the bare literals Triton parses', () => {
    const { body } = encodeInferenceRequest(
      { inputs: [{ name: 'ID', datatype: 'UINT64', shape: [1], data: [18446744073709551615n] }] },
      { binary: false },
    );
    expect(body.toString()).toContain('"data":[18446744073709551615]');
    const special = encodeInferenceRequest(
      { inputs: [{ name: 'X', datatype: 'FP32', shape: [4], data: [NaN, Infinity, -Infinity, 'nan'] }] },
      { binary: false },
    );
    // RapidJSON with kParseNanAndInfFlag (Triton's reader) takes exactly these spellings; strict JSON has none.
    expect(special.body.toString()).toContain('"data":[NaN,Infinity,-Infinity,NaN]');
    expect(decodeInferenceRequest(special.body, special.contentType).inputs[0]!.data).toEqual([NaN, Infinity, -Infinity, NaN]);
  });

  it('refuses a scalar input (shape []), which Triton never accepts, with the fix', () => {
    for (const binary of [false, true]) {
      expect(() => encodeInferenceRequest({ inputs: [{ name: 'T', datatype: 'FP32', shape: [], data: [0.5] }] }, { binary })).toThrow(
        "Input 'T' has shape [] (a scalar), which Triton never accepts: every model input has at least one dimension. " +
          'Send it with shape [1] (one element); a model that wants a scalar declares dims: [ 1 ] with reshape: { shape: [ ] } ' +
          'in its config.pbtxt.',
      );
    }
  });

  it('asks for binary outputs over JSON inputs when told (binaryOutputs), as tritonclient does', () => {
    const { body, contentType } = encodeInferenceRequest({ inputs: [request.inputs[1]!] }, { binary: false, binaryOutputs: true });
    expect(contentType).toBe('application/json');
    expect(body.toString()).toBe(
      '{"parameters":{"binary_data_output":true},"inputs":[{"name":"MASK","shape":[1,2],"datatype":"INT32","data":[1,-1]}]}',
    );
    const withOutput = { inputs: [request.inputs[1]!], outputs: [{ name: 'A' }] };
    const listed = encodeInferenceRequest(withOutput, { binary: false, binaryOutputs: true });
    expect(listed.body.toString()).toContain('"outputs":[{"name":"A","parameters":{"binary_data":true}}]');
    expect(encodeInferenceRequest({ inputs: [request.inputs[1]!] }, { binary: false }).body.toString()).not.toContain('binary_data');
  });

  it('refuses a shape that does not match the data', () => {
    expect(() =>
      encodeInferenceRequest({ inputs: [{ name: 'X', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3] }] }, { binary: true }),
    ).toThrow("Tensor 'X' has 3 elements but its shape [2, 2] needs 4.");
  });

  it('decodes what it encodes, as the server would', () => {
    const encoded = encodeInferenceRequest(request, { binary: true });
    const decoded = decodeInferenceRequest(encoded.body, encoded.contentType);
    expect(decoded.inputs.map((t) => [t.name, t.datatype, t.shape])).toEqual([
      ['INPUT0', 'BYTES', [2, 1]],
      ['MASK', 'INT32', [1, 2]],
    ]);
    expect(decoded.inputs[0]!.data.map((v) => Buffer.from(v as Uint8Array).toString())).toEqual(['hi', 'yo!']);
    expect(decoded.inputs[1]!.data).toEqual([1, -1]);
  });
});

describe('response bodies', () => {
  function mixedResponse(): { body: Buffer; contentType: string } {
    const header = JSON.stringify({
      model_name: 'ensemble.tar.gz',
      model_version: '1',
      outputs: [
        { name: 'LABEL', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: 7 } },
        { name: 'IDS', datatype: 'INT64', shape: [2], data: [7, -3] },
        { name: 'EMPTY', datatype: 'FP32', shape: [0], parameters: { binary_data_size: 0 } },
        { name: 'PROBS', datatype: 'FP16', shape: [1, 2], parameters: { binary_data_size: 4 } },
      ],
    });
    const blobs = Buffer.from('03000000' + '646f67' + '003c' + '0038', 'hex');
    return { body: Buffer.concat([Buffer.from(header), blobs]), contentType: binaryJsonContentType(Buffer.byteLength(header)) };
  }

  it('decodes a mixed JSON and binary response in output order', () => {
    const { body, contentType } = mixedResponse();
    const response = decodeInferenceResponse(body, contentType);
    expect(response.model_name).toBe('ensemble.tar.gz');
    expect(response.outputs.map((o) => o.name)).toEqual(['LABEL', 'IDS', 'EMPTY', 'PROBS']);
    expect(Buffer.from(response.outputs[0]!.data[0] as Uint8Array).toString()).toBe('dog');
    expect(response.outputs[1]!.data).toEqual([7n, -3n]);
    expect(response.outputs[2]!.data).toEqual([]);
    expect(response.outputs[3]!.data).toEqual([1, 0.5]);
  });

  it('reads a plain JSON response whatever its length', () => {
    const body = Buffer.from('{"outputs":[{"name":"Y","datatype":"BOOL","shape":[2],"data":[true,false]}]}');
    expect(decodeInferenceResponse(body, 'application/json').outputs[0]!.data).toEqual([true, false]);
  });

  it('reports a truncated binary response', () => {
    const { body, contentType } = mixedResponse();
    expect(() => decodeInferenceResponse(body.subarray(0, body.length - 1), contentType)).toThrow(
      "Tensor 'PROBS' declares binary_data_size 4 but only 3 bytes remain in the response.",
    );
  });

  it('reports a header size outside the body with Triton\'s wording', () => {
    expect(() => decodeInferenceResponse(Buffer.from('{}'), binaryJsonContentType(3))).toThrow(
      'inference header size should be in range (0, 2), got: 3',
    );
  });

  it('turns an error body into the server\'s message', () => {
    expect(() => decodeInferenceResponse(Buffer.from('{"error":"Request for unknown model"}'), 'application/json')).toThrow(
      'The model returned an error: Request for unknown model',
    );
  });
});

describe('FP16 and BF16 are never sent as JSON (Triton refuses them)', () => {
  it('refuses an FP16 input in a JSON body with Triton\'s own words', () => {
    const request = { inputs: [{ name: 'X', datatype: 'FP16' as const, shape: [1], data: [1] }] };
    expect(() => encodeInferenceRequest(request, { binary: false })).toThrow(
      'receiving FP16 data via JSON is not supported. Please use the binary data format for input X',
    );
    expect(() => encodeInferenceRequest(request, { binary: false })).toThrow(MmeError);
    expect(hex(encodeInferenceRequest(request, { binary: true }).body.subarray(-2))).toBe('003c');
  });

  it('tells which datatypes JSON carries', () => {
    expect(['FP16', 'BF16', 'FP32', 'INT64', 'BYTES'].map((d) => jsonCarries(d as KServeDatatype))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});

describe('values plain JSON would lose', () => {
  it('sends a negative zero as -0.0, which RapidJSON keeps negative (it reads -0 as the integer 0)', () => {
    const { body, contentType } = encodeInferenceRequest(
      { inputs: [{ name: 'X', datatype: 'FP32', shape: [3], data: [-0, 0, -1.5] }] },
      { binary: false },
    );
    expect(body.toString()).toBe('{"inputs":[{"name":"X","shape":[3],"datatype":"FP32","data":[-0.0,0,-1.5]}]}');
    expect(Object.is(decodeInferenceRequest(body, contentType).inputs[0]!.data[0], -0)).toBe(true);
  });

  it('decodes 64-bit integers beyond 2^53 in a JSON response exactly, and keeps -0.0 negative', () => {
    const body = Buffer.from(
      '{"model_name":"ids.tar.gz","outputs":[' +
        '{"name":"ID","datatype":"INT64","shape":[3],"data":[9007199254740993,-9223372036854775808,5]},' +
        '{"name":"U","datatype":"UINT64","shape":[1],"data":[18446744073709551615]},' +
        '{"name":"S","datatype":"BYTES","shape":[1],"data":["12345678901234567890"]},' +
        '{"name":"F","datatype":"FP64","shape":[3],"data":[1.1234567890123456789,12345678901234567890.0,-0.0]}]}',
    );
    const [id, u, s, f] = decodeInferenceResponse(body, 'application/json').outputs;
    expect(id!.data).toEqual([9007199254740993n, -9223372036854775808n, 5n]);
    expect(u!.data).toEqual([18446744073709551615n]);
    expect(Buffer.from(s!.data[0] as Uint8Array).toString()).toBe('12345678901234567890');
    expect(f!.data.slice(0, 2)).toEqual([1.1234567890123457, 12345678901234567000]);
    expect(Object.is(f!.data[2], -0)).toBe(true);
  });

  it('parses JSON exactly as JSON.parse does, except integers beyond 2^53 become their digits', () => {
    const lossless = (value: unknown): unknown => {
      if (typeof value === 'number') {
        if (Object.is(value, -0)) return 0;
        return Number.isInteger(value) && !Number.isSafeInteger(value) && !/e/.test(String(value)) ? String(value) : value;
      }
      if (Array.isArray(value)) return value.map(lossless);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, lossless(v)]));
      return value;
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(parseJsonExact(JSON.stringify(value))).toEqual(lossless(value));
      }),
      { numRuns: 300 },
    );
    expect(parseJsonExact('{"a\\"1234567890123456789":"x\\"12345678901234567890","b":[12345678901234567890]}')).toEqual({
      'a"1234567890123456789': 'x"12345678901234567890',
      b: ['12345678901234567890'],
    });
  });
});

describe('BF16 rounding', () => {
  it('rounds to nearest (ties to even) where tritonclient truncates the float32', () => {
    const value = 1 + 0.75 * 2 ** -7; // three quarters of the way from 1 (0x3f80) to the next BF16 (0x3f81)
    const float32 = Buffer.alloc(4);
    float32.writeFloatLE(value);
    expect(float32.readUInt16LE(2)).toBe(0x3f80); // tritonclient: struct.pack("<f", v)[2:4]
    expect(bfloat16Bits(value)).toBe(0x3f81);
    expect(hex(encodeTensorData('BF16', [value]))).toBe('813f');
  });
});

describe('size limits, checked before encoding', () => {
  it('refuses a binary request over maxBytes from its sizes alone, before any element is converted', () => {
    // The last element is no number: encoding would fail on it, so a size error proves nothing was encoded.
    const data: TensorElement[] = [...new Array<number>(1000).fill(1), 'not a number'];
    const request = { inputs: [{ name: 'X', datatype: 'FP32' as const, shape: [1001], data }] };
    const refused = () => encodeInferenceRequest(request, { binary: true, maxBytes: 4000 });
    expect(refused).toThrow(RequestTooLargeError);
    expect(refused).toThrow('The request is 0.0 MiB, over the 0.0 MiB allowed.');
    try {
      refused();
    } catch (err) {
      expect(err).toMatchObject({ bytes: 4004, maxBytes: 4000, exact: true, binary: true, code: 'USAGE' });
    }
    expect(() => encodeInferenceRequest(request, { binary: true, maxBytes: 5000 })).toThrow(/element 1000 of tensor 'X'/);
  });

  it('stops a JSON request as soon as it passes maxBytes, with an estimate of its size', () => {
    const data: TensorElement[] = [...new Array<number>(100_000).fill(0.25), 'not a number'];
    const request = { inputs: [{ name: 'X', datatype: 'FP32' as const, shape: [100_001], data }] };
    let caught: unknown;
    try {
      encodeInferenceRequest(request, { binary: false, maxBytes: 10_000 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RequestTooLargeError);
    // 5 bytes per element ("0.25,"): about 500 kB for the whole tensor.
    expect(caught).toMatchObject({ exact: false, binary: false });
    expect((caught as RequestTooLargeError).bytes).toBeGreaterThan(450_000);
    expect((caught as RequestTooLargeError).bytes).toBeLessThan(550_000);
  });

  it('keeps a body that fits, byte for byte the same as without a limit', () => {
    const request = { inputs: [{ name: 'X', datatype: 'INT32' as const, shape: [3], data: [1, 2, 3] }] };
    for (const binary of [false, true]) {
      expect(encodeInferenceRequest(request, { binary, maxBytes: 1 << 20 })).toEqual(encodeInferenceRequest(request, { binary }));
    }
  });
});

describe('responses as Triton writes them', () => {
  it('decodes the bare NaN, Infinity and -Infinity of RapidJSON kWriteNanAndInfFlag as numbers', () => {
    const body = Buffer.from(
      '{"model_name":"m","outputs":[{"name":"Y","datatype":"FP32","shape":[1,4],"data":[NaN,Infinity,-Infinity,1.5]},' +
        '{"name":"S","datatype":"BYTES","shape":[1],"data":["NaN Infinity"]}]}',
    );
    const response = decodeInferenceResponse(body, 'application/json');
    expect(response.outputs[0]!.data).toEqual([NaN, Infinity, -Infinity, 1.5]);
    expect(Buffer.from(response.outputs[1]!.data[0] as Uint8Array).toString()).toBe('NaN Infinity');
    expect(parseJsonExact('{"a":"x NaN","b":[-Infinity],"NaNs":NaN}')).toEqual({ a: 'x NaN', b: ['-Infinity'], NaNs: 'NaN' });
  });

  it('keeps BYTES that are not UTF-8 intact in a binary output', () => {
    const blob = Buffer.from([3, 0, 0, 0, 0xff, 0xfe, 0x00]);
    const header = JSON.stringify({ outputs: [{ name: 'B', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: 7 } }] });
    const response = decodeInferenceResponse(Buffer.concat([Buffer.from(header), blob]), binaryJsonContentType(header.length));
    expect([...(response.outputs[0]!.data[0] as Uint8Array)]).toEqual([0xff, 0xfe, 0x00]);
  });
});

describe('malformed responses: one precise BAD_BODY each, never a crash', () => {
  const json = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
  const tensor = { name: 'Y', datatype: 'FP32', shape: [2], data: [1, 2] };
  const cases: [string, Buffer, string | undefined, RegExp][] = [
    ['a body that is not JSON', json('<html>busy</html>'), 'application/json', /is not a KServe v2 inference response: its JSON/],
    ['a JSON array', json([1, 2]), 'application/json', /^The response JSON is not an object\.$/],
    ['no outputs array', json({ model_name: 'm' }), 'application/json', /^The response JSON has no "outputs" array\.$/],
    ['an output without a name', json({ outputs: [{ datatype: 'FP32', shape: [1], data: [1] }] }), undefined, /Tensor 0 of the response/],
    ['an unknown datatype', json({ outputs: [{ ...tensor, datatype: 'FP8' }] }), undefined, /Tensor 'Y' has unknown datatype "FP8"/],
    ['a negative dimension', json({ outputs: [{ ...tensor, shape: [-1] }] }), undefined, /Tensor 'Y' has no valid shape/],
    ['a missing shape', json({ outputs: [{ name: 'Y', datatype: 'FP32', data: [1] }] }), undefined, /Tensor 'Y' has no valid shape/],
    ['too few elements', json({ outputs: [{ ...tensor, shape: [3] }] }), undefined, /holds 2 elements but its shape \[3\] needs 3/],
    ['an object among the data', json({ outputs: [{ ...tensor, data: [1, { x: 1 }] }] }), undefined, /element 1 of tensor 'Y'/],
    ['a string that is no number', json({ outputs: [{ ...tensor, data: [1, 'one'] }] }), undefined, /FP32 needs a number/],
    [
      'a negative binary_data_size',
      json({ outputs: [{ name: 'Y', datatype: 'FP32', shape: [1], parameters: { binary_data_size: -4 } }] }),
      undefined,
      /invalid binary_data_size -4/,
    ],
    ['a header size that is no number', json({ outputs: [] }), `${BINARY_MIME};json-header-size=ten`, /inference header size/],
    ['a binary content type without a size', json({ outputs: [] }), BINARY_MIME, /Unable to parse inference header size/],
  ];
  for (const [what, body, contentType, message] of cases) {
    it(`reports ${what}`, () => {
      let caught: unknown;
      try {
        decodeInferenceResponse(body, contentType);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(MmeError);
      expect(caught).toMatchObject({ code: 'BAD_BODY', message: expect.stringMatching(message) });
    });
  }

  it('reports bytes after the last binary output, and a binary output whose size breaks its datatype', () => {
    const header = JSON.stringify({ outputs: [{ name: 'Y', datatype: 'FP32', shape: [1], parameters: { binary_data_size: 4 } }] });
    const trailing = Buffer.concat([Buffer.from(header), Buffer.alloc(6)]);
    expect(() => decodeInferenceResponse(trailing, binaryJsonContentType(header.length))).toThrow(
      'The response has 2 bytes after its last binary tensor that no tensor declares.',
    );
    const odd = JSON.stringify({ outputs: [{ name: 'Y', datatype: 'FP32', shape: [1], parameters: { binary_data_size: 3 } }] });
    expect(() => decodeInferenceResponse(Buffer.concat([Buffer.from(odd), Buffer.alloc(3)]), binaryJsonContentType(odd.length))).toThrow(
      "Tensor 'Y' (FP32) has 3 bytes of data; expected 4 (1 × 4).",
    );
  });
});

