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


describe('element values: what each datatype takes, and the message for what it refuses', () => {
  const refusal = (run: () => unknown): { code?: string; message?: string } => {
    try {
      run();
    } catch (err) {
      return { code: (err as MmeError).code, message: (err as Error).message };
    }
    throw new Error('no error');
  };

  it('takes integers as numbers, bigints, booleans and decimal strings (spaces around them allowed)', () => {
    expect(hex(encodeTensorData('INT32', [true, false, ' 42 ', '-7', 3n]))).toBe(
      '01000000' + '00000000' + '2a000000' + 'f9ffffff' + '03000000',
    );
    expect(hex(encodeTensorData('INT64', [true, ' -2 ', 5]))).toBe('0100000000000000' + 'feffffffffffffff' + '0500000000000000');
  });

  it('refuses what is no integer, naming the element, the value and the datatype', () => {
    expect(refusal(() => encodeTensorData('INT32', [1, '1.5'], 'ids'))).toEqual({
      code: 'BAD_VALUE',
      message: 'element 1 of tensor \'ids\' is "1.5", but INT32 needs an integer.',
    });
    expect(refusal(() => encodeTensorData('INT16', [Buffer.from('abc')], 'x')).message).toBe(
      "element 0 of tensor 'x' is 3 raw bytes, but INT16 needs an integer.",
    );
    expect(refusal(() => encodeTensorData('INT64', [2 ** 60], 'ids')).message).toBe(
      "element 0 of tensor 'ids' is 1152921504606847000, beyond 2^53 where JSON numbers lose precision; " +
        'write it as a string ("1152921504606846976") to send it exactly.',
    );
    // A narrow integer type takes a number beyond 2^53 only to refuse it as out of range.
    expect(refusal(() => encodeTensorData('INT32', [2 ** 60], 'x')).message).toBe(
      "element 0 of tensor 'x' is 1152921504606846976, outside the INT32 range -2147483648..2147483647.",
    );
  });

  it('refuses integers below the range as well as above it', () => {
    expect(() => encodeTensorData('UINT8', [-1], 'p')).toThrow("element 0 of tensor 'p' is -1, outside the UINT8 range 0..255.");
    expect(() => encodeTensorData('INT8', [-129], 'p')).toThrow("element 0 of tensor 'p' is -129, outside the INT8 range -128..127.");
    expect(() => encodeTensorData('INT64', [-(2n ** 63n) - 1n], 'p')).toThrow(/outside the INT64 range -9223372036854775808\.\./);
    expect(hex(encodeTensorData('INT8', [-128, 127]))).toBe('807f');
    expect(hex(encodeTensorData('UINT16', [0, 65535]))).toBe('0000ffff');
  });

  it('takes floats as numbers, bigints and strings, with NaN and the infinities spelt any usual way', () => {
    const values = [2n, ' 1.5 ', 'nan', '-NaN', 'inf', '+inf', '-inf', 'Infinity', '-infinity', '1e3'];
    expect(encodeTensorData('FP64', values).length).toBe(80);
    const back = decodeTensorData('FP64', encodeTensorData('FP64', values));
    expect(back).toEqual([2, 1.5, NaN, NaN, Infinity, Infinity, -Infinity, Infinity, -Infinity, 1000]);
  });

  it('refuses a float element that is no number, an empty string included', () => {
    expect(refusal(() => encodeTensorData('FP32', ['one'], 'x'))).toEqual({
      code: 'BAD_VALUE',
      message: 'element 0 of tensor \'x\' is "one", but FP32 needs a number.',
    });
    expect(refusal(() => encodeTensorData('FP32', ['  '], 'x')).message).toBe(
      'element 0 of tensor \'x\' is "  ", but FP32 needs a number.',
    );
    expect(refusal(() => encodeTensorData('FP16', [true], 'x')).message).toBe("element 0 of tensor 'x' is true, but FP16 needs a number.");
    expect(refusal(() => encodeTensorData('FP32', ['infinite'], 'x')).message).toMatch(/needs a number/);
  });

  it('takes booleans as true/false, 0/1 and 0n/1n, and refuses anything else', () => {
    expect(hex(encodeTensorData('BOOL', [true, false, 1, 0, 1n, 0n]))).toBe('010001000100');
    expect(refusal(() => encodeTensorData('BOOL', ['true'], 'm'))).toEqual({
      code: 'BAD_VALUE',
      message: 'element 0 of tensor \'m\' is "true", but BOOL needs true, false, 0 or 1.',
    });
    expect(refusal(() => encodeTensorData('BOOL', [2n], 'm')).message).toBe(
      "element 0 of tensor 'm' is 2, but BOOL needs true, false, 0 or 1.",
    );
  });

  it('takes BYTES as strings and raw bytes, and refuses numbers', () => {
    const raw = new Uint8Array([9, 8, 7, 6]).subarray(1, 3);
    expect(hex(encodeTensorData('BYTES', [raw]))).toBe('02000000' + '0807');
    expect(refusal(() => encodeTensorData('BYTES', [5], 's'))).toEqual({
      code: 'BAD_VALUE',
      message: "element 0 of tensor 's' is 5, but BYTES needs a string.",
    });
  });
});

describe('binary tensor data that does not add up', () => {
  it('reports a BYTES tensor that ends inside an element\'s length', () => {
    expect(() => decodeTensorData('BYTES', Buffer.from('01000000' + '61' + '0200', 'hex'), undefined, 's')).toThrow(
      "Tensor 's' (BYTES) ends inside the 4-byte length of element 1 (at byte 5 of 7).",
    );
  });

  it('reports a BYTES tensor with more or fewer elements than its shape, and takes one that has exactly as many', () => {
    const two = Buffer.from('01000000' + '61' + '00000000', 'hex');
    expect(() => decodeTensorData('BYTES', two, 3, 's')).toThrow("Tensor 's' (BYTES) holds 2 elements but its shape needs 3.");
    expect(() => decodeTensorData('BYTES', two, 1, 's')).toThrow("Tensor 's' (BYTES) holds 2 elements but its shape needs 1.");
    expect(decodeTensorData('BYTES', two, 2, 's').map((b) => hex(b as Uint8Array))).toEqual(['61', '']);
    expect(decodeTensorData('BYTES', Buffer.alloc(0), 0, 's')).toEqual([]);
  });

  it('reports fixed-size data that is no whole number of elements when no shape is given', () => {
    expect(() => decodeTensorData('INT16', Buffer.alloc(3), undefined, 'o')).toThrow(
      "Tensor 'o' (INT16) has 3 bytes of data; expected a multiple of 2.",
    );
    expect(decodeTensorData('INT16', Buffer.from('0100ffff', 'hex'))).toEqual([1, -1]);
  });

  it('reads from a view into a larger buffer at its own offset', () => {
    const whole = Buffer.from('ff' + '02000000' + '03000000' + 'ff', 'hex');
    expect(decodeTensorData('INT32', whole.subarray(1, 9), 2)).toEqual([2, 3]);
  });
});

describe('JSON data in a response', () => {
  const output = (datatype: string, shape: number[], data: unknown) =>
    decodeInferenceResponse(Buffer.from(JSON.stringify({ outputs: [{ name: 'Y', datatype, shape, data }] })), 'application/json')
      .outputs[0]!.data;

  it('gives narrow integers as numbers and 64-bit ones as bigints', () => {
    expect(output('INT32', [2], [1, -2])).toEqual([1, -2]);
    expect(output('UINT32', [1], [4294967295])).toEqual([4294967295]);
    expect(output('UINT64', [1], [3])).toEqual([3n]);
  });

  it('reads nested data in row-major order, and a single value without brackets', () => {
    expect(output('INT32', [2, 2], [[1, 2], [3, 4]])).toEqual([1, 2, 3, 4]);
    expect(output('INT32', [2, 1, 2], [[[1, 2]], [[3, 4]]])).toEqual([1, 2, 3, 4]);
    expect(output('FP32', [1], 2.5)).toEqual([2.5]);
  });

  it('reads a number among BYTES data as its text', () => {
    expect(output('BYTES', [2], ['a', 12]).map((b) => Buffer.from(b as Uint8Array).toString())).toEqual(['a', '12']);
  });

  it('takes a tensor with no data when its shape holds no element', () => {
    expect(output('FP32', [0], undefined)).toEqual([]);
  });

  it('reports a value the datatype cannot hold as a fault of the body (BAD_BODY)', () => {
    expect(() => output('UINT8', [1], [300])).toThrow(expect.objectContaining({
      code: 'BAD_BODY',
      message: "element 0 of tensor 'Y' is 300, outside the UINT8 range 0..255.",
    }));
    expect(() => output('INT32', [1], [null])).toThrow(
      expect.objectContaining({ code: 'BAD_BODY', message: "element 0 of tensor 'Y' is null, which is not a INT32 value." }),
    );
  });

  it('refuses data nested deeper than 64 arrays, and reads 64', () => {
    let deep: unknown = [1];
    for (let i = 1; i < 64; i++) deep = [deep];
    expect(output('INT32', [1], deep)).toEqual([1]);
    expect(() => output('INT32', [1], [deep])).toThrow(
      expect.objectContaining({
        code: 'BAD_BODY',
        message: "Tensor 'Y' has data nested more than 64 arrays deep; a tensor's JSON data is a flat or row-major nested " +
          'array with one level per dimension.',
      }),
    );
  });
});

describe('request bodies: every field', () => {
  it('writes the request id, its parameters, each input\'s parameters and the listed outputs', () => {
    const request = {
      id: 'req-1',
      parameters: { priority: 2 },
      inputs: [{ name: 'X', datatype: 'INT32' as const, shape: [1], data: [7], parameters: { shared_memory: false } }],
      outputs: [{ name: 'A', parameters: { binary_data: false } }, { name: 'B' }],
    };
    expect(encodeInferenceRequest(request, { binary: false }).body.toString()).toBe(
      '{"id":"req-1","parameters":{"priority":2},' +
        '"inputs":[{"name":"X","shape":[1],"datatype":"INT32","parameters":{"shared_memory":false},"data":[7]}],' +
        '"outputs":[{"name":"A","parameters":{"binary_data":false}},{"name":"B"}]}',
    );
    const binary = encodeInferenceRequest(request, { binary: true });
    const header = binary.body.subarray(0, binary.body.length - 4).toString();
    // An explicit binary_data on a listed output is kept; the others are asked for in binary.
    expect(header).toBe(
      '{"id":"req-1","parameters":{"priority":2},' +
        '"inputs":[{"name":"X","shape":[1],"datatype":"INT32","parameters":{"shared_memory":false,"binary_data_size":4}}],' +
        '"outputs":[{"name":"A","parameters":{"binary_data":false}},{"name":"B","parameters":{"binary_data":true}}]}',
    );
    const decoded = decodeInferenceRequest(binary.body, binary.contentType);
    expect(decoded).toEqual({
      id: 'req-1',
      parameters: { priority: 2 },
      inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [7], parameters: { shared_memory: false, binary_data_size: 4 } }],
      outputs: [{ name: 'A', parameters: { binary_data: false } }, { name: 'B', parameters: { binary_data: true } }],
    });
  });

  it('keeps the request\'s own parameters beside binary_data_output, and writes no empty parameters', () => {
    const inputs = [{ name: 'X', datatype: 'INT32' as const, shape: [1], data: [7] }];
    const withParameters = encodeInferenceRequest({ parameters: { a: 1 }, inputs }, { binary: false, binaryOutputs: true });
    expect(withParameters.body.toString()).toMatch(/^\{"parameters":\{"binary_data_output":true,"a":1\},"inputs"/);
    const empty = encodeInferenceRequest({ parameters: {}, inputs, outputs: [] }, { binary: false });
    expect(empty.body.toString()).toBe('{"inputs":[{"name":"X","shape":[1],"datatype":"INT32","data":[7]}]}');
  });

  it('refuses a dimension that is negative or not an integer', () => {
    for (const shape of [[-1], [1.5], [2, NaN]]) {
      expect(() => encodeInferenceRequest({ inputs: [{ name: 'X', datatype: 'FP32', shape, data: [] }] }, { binary: true })).toThrow(
        `Tensor 'X' has shape [${shape.join(', ')}]; every dimension must be a non-negative integer.`,
      );
    }
  });

  it('refuses BYTES that are not UTF-8 in a JSON body, and sends UTF-8 bytes as their text', () => {
    const bytes = (data: Uint8Array[]) => ({ inputs: [{ name: 'S', datatype: 'BYTES' as const, shape: [data.length], data }] });
    expect(() => encodeInferenceRequest(bytes([Buffer.from([0xff])]), { binary: false })).toThrow(
      expect.objectContaining({
        code: 'BAD_VALUE',
        message: "element 0 of tensor 'S' is not valid UTF-8, which JSON cannot carry; send it with --binary.",
      }),
    );
    expect(encodeInferenceRequest(bytes([Buffer.from('é"')]), { binary: false }).body.toString()).toContain('"data":["é\\""]');
  });

  it('writes booleans, 64-bit integers and mixed float elements one by one', () => {
    const json = (datatype: KServeDatatype, data: TensorElement[]) =>
      encodeInferenceRequest({ inputs: [{ name: 'X', datatype, shape: [data.length], data }] }, { binary: false }).body.toString();
    expect(json('BOOL', [true, 0])).toContain('"data":[true,false]');
    expect(json('INT64', [-5, '12345678901234567890'.slice(0, 18)])).toContain('"data":[-5,123456789012345678]');
    expect(json('FP32', ['1.5', 2, -0])).toContain('"data":[1.5,2,-0.0]');
    expect(json('INT32', ['3', 4])).toContain('"data":[3,4]');
  });
});

describe('size limits at the boundary', () => {
  const int32 = (count: number) => ({
    inputs: [{ name: 'X', datatype: 'INT32' as const, shape: [count], data: new Array<number>(count).fill(1) }],
  });

  it('takes a body exactly maxBytes long and refuses one a byte longer, binary or JSON', () => {
    for (const binary of [true, false]) {
      const size = encodeInferenceRequest(int32(10), { binary }).body.length;
      expect(encodeInferenceRequest(int32(10), { binary, maxBytes: size }).body.length).toBe(size);
      expect(() => encodeInferenceRequest(int32(10), { binary, maxBytes: size - 1 })).toThrow(RequestTooLargeError);
    }
  });

  it('counts a BYTES input\'s UTF-8 bytes and length prefixes before encoding it', () => {
    const request = { inputs: [{ name: 'S', datatype: 'BYTES' as const, shape: [2], data: ['é', Buffer.from('abc')] }] };
    const size = encodeInferenceRequest(request, { binary: true }).body.length;
    expect(encodeInferenceRequest(request, { binary: true, maxBytes: size }).body.length).toBe(size);
    let caught: RequestTooLargeError | undefined;
    try {
      encodeInferenceRequest(request, { binary: true, maxBytes: 12 });
    } catch (err) {
      caught = err as RequestTooLargeError;
    }
    // 4 + 2 bytes for "é", 4 + 3 for the raw bytes: known before any header is written.
    expect(caught).toMatchObject({ bytes: 13, maxBytes: 12, exact: true, binary: true });
  });

  it('says "about" for an estimated JSON size, in MiB with one decimal', () => {
    const data = new Array<number>(300_000).fill(0.25);
    const request = { inputs: [{ name: 'X', datatype: 'FP32' as const, shape: [data.length], data }] };
    expect(() => encodeInferenceRequest(request, { binary: false, maxBytes: 1024 * 1024 })).toThrow(
      /^The request is about 1\.[0-9] MiB, over the 1\.0 MiB allowed\.$/,
    );
    expect(() => encodeInferenceRequest(request, { binary: true, maxBytes: 1024 * 1024 })).toThrow(
      'The request is 1.1 MiB, over the 1.0 MiB allowed.',
    );
  });
});

describe('the binary+json content type', () => {
  const body = (header: object, blob: Buffer) => {
    const text = JSON.stringify(header);
    return { text, body: Buffer.concat([Buffer.from(text), blob]) };
  };

  it('is recognised whatever its case and leading spaces, with spaces around the size', () => {
    const output = { name: 'Y', datatype: 'INT8', shape: [1], parameters: { binary_data_size: 1 } };
    const { text, body: bytes } = body({ outputs: [output] }, Buffer.from([5]));
    for (const contentType of [
      `${BINARY_MIME};json-header-size=${text.length}`,
      `  Application/VND.SageMaker-Triton.Binary+JSON; JSON-Header-Size = ${text.length}`,
    ]) {
      expect(decodeInferenceResponse(bytes, contentType).outputs[0]!.data).toEqual([5]);
    }
  });

  it('takes a header size equal to the body length (a body that is all header)', () => {
    const text = JSON.stringify({ outputs: [] });
    expect(decodeInferenceResponse(Buffer.from(text), binaryJsonContentType(text.length)).outputs).toEqual([]);
  });

  it('reads a body without a content type, or with another one, as JSON', () => {
    const text = '{"outputs":[{"name":"Y","datatype":"INT8","shape":[1],"data":[5]}]}';
    expect(decodeInferenceResponse(Buffer.from(text)).outputs[0]!.data).toEqual([5]);
    expect(decodeInferenceResponse(Buffer.from(text), 'text/plain;json-header-size=3').outputs[0]!.data).toEqual([5]);
  });

  it('refuses a negative or fractional header size with Triton\'s wording', () => {
    for (const size of ['-1', '1.5']) {
      expect(() => decodeInferenceResponse(Buffer.from('{}'), `${BINARY_MIME};json-header-size=${size}`)).toThrow(
        `inference header size should be in range (0, 2), got: ${size}`,
      );
    }
  });
});

describe('response header fields', () => {
  it('keeps model_name, model_version, id and parameters when they have the right type, and drops them otherwise', () => {
    const good = { model_name: 'm', model_version: '3', id: 'r', parameters: { sequence_id: 0 }, outputs: [] };
    expect(decodeInferenceResponse(Buffer.from(JSON.stringify(good)))).toEqual(good);
    const bad = { model_name: 1, model_version: 3, id: 7, parameters: [1], outputs: [] };
    expect(decodeInferenceResponse(Buffer.from(JSON.stringify(bad)))).toEqual({ outputs: [] });
  });

  it('names the body, the parse error and the content type when the header does not parse', () => {
    expect(() => decodeInferenceRequest(Buffer.from('{"inputs":'), 'application/json')).toThrow(
      /^The request is not a KServe v2 inference request: its JSON header does not parse \(.+\)\. Content type: application\/json\.$/,
    );
    expect(() => decodeInferenceResponse(Buffer.from('nope'))).toThrow(/\. Content type: none\.$/);
  });

  it('refuses a request without a name on a tensor, a fractional binary_data_size, and a string one', () => {
    expect(() => decodeInferenceRequest(Buffer.from('{"inputs":[{"name":3}]}'))).toThrow('Tensor 0 of the request has no name.');
    for (const size of [1.5, '4']) {
      const header = JSON.stringify({ inputs: [{ name: 'X', datatype: 'INT8', shape: [1], parameters: { binary_data_size: size } }] });
      expect(() => decodeInferenceRequest(Buffer.from(header + 'x'), binaryJsonContentType(header.length))).toThrow(
        `Tensor 'X' has an invalid binary_data_size ${JSON.stringify(size)}.`,
      );
    }
  });

  it('returns an error body as the model\'s error even when it has no outputs list', () => {
    expect(() => decodeInferenceResponse(Buffer.from('{"error":"boom"}'))).toThrow(
      expect.objectContaining({ code: 'MODEL_ERROR', message: 'The model returned an error: boom' }),
    );
    // A request with an "error" field is no error: it needs its inputs.
    expect(() => decodeInferenceRequest(Buffer.from('{"error":"x"}'))).toThrow('The request JSON has no "inputs" array.');
  });
});

describe('exact JSON numbers', () => {
  it('turns only whole integer tokens beyond 2^53 into digits: not fractions, exponents, nor safe 16-digit ones', () => {
    expect(parseJsonExact('[9007199254740993,-9007199254740993,9007199254740991,1.12345678901234567,1e1234567890123456]')).toEqual([
      '9007199254740993',
      '-9007199254740993',
      9007199254740991,
      1.1234567890123457,
      Infinity,
    ]);
    expect(parseJsonExact('{"n":12345678901234567890.5,"m":1234567890123456789e2}')).toEqual({
      n: 12345678901234567000,
      m: 1.234567890123456789e20,
    });
    // The boundary: 2^53 - 1 is the largest safe integer, 2^53 the first that is not.
    expect(parseJsonExact('[-9007199254740991, 9007199254740991, -9007199254740992, 9007199254740992]')).toEqual([
      -9007199254740991,
      9007199254740991,
      '-9007199254740992',
      '9007199254740992',
    ]);
  });

  it('leaves NaN and Infinity inside names and strings alone, and refuses them as parts of words', () => {
    expect(parseJsonExact('{"NaN":[NaN,-Infinity,Infinity]}')).toEqual({ NaN: ['NaN', '-Infinity', 'Infinity'] });
    expect(() => parseJsonExact('[xNaN]')).toThrow(SyntaxError);
    expect(() => parseJsonExact('[NaNx]')).toThrow(SyntaxError);
  });
});
