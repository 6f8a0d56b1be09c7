import { ModelConfigSchema } from '../../lib/config/model-config-schema';
import { MAX_CONFIG_BYTES, MAX_NESTING_DEPTH, parseModelConfig } from '../../lib/config/parse';
import { configToJson } from '../../lib/config/print';

function ok(text: string) {
  const result = parseModelConfig(text, { file: 'm/config.pbtxt', model: 'm' });
  expect(result.diagnostics).toEqual([]);
  // Whatever the parser builds must satisfy the zod schema the types come from.
  const check = ModelConfigSchema.safeParse(result.config);
  if (!check.success) throw new Error(check.error.message);
  return result.config;
}

function errors(text: string) {
  return parseModelConfig(text, { file: 'm/config.pbtxt', model: 'm' }).diagnostics;
}

describe('config.pbtxt parser: syntax protobuf text format accepts', () => {
  it('skips # comments anywhere, including after values and at the end without a newline', () => {
    expect(ok('# header\nname: "a" # trailing\n# last')).toEqual({ name: 'a' });
  });

  it('accepts a message with or without ":" and with { } or < >', () => {
    const config = ok('version_policy: { all { } }\ndynamic_batching < max_queue_delay_microseconds: 5 >');
    expect(config.version_policy).toEqual({ all: {} });
    expect(config.dynamic_batching).toEqual({ max_queue_delay_microseconds: 5n });
  });

  it('collects repeated fields given one per line and as [a, b] lists, for scalars and messages', () => {
    const config = ok(`
      input { name: "a" data_type: TYPE_FP32 dims: 3 dims: 224 }
      input [ { name: "b" data_type: TYPE_INT32 dims: [ 1, -1 ] }, { name: "c" data_type: TYPE_BOOL dims: [] } ]
    `);
    expect(config.input?.map((i) => i.name)).toEqual(['a', 'b', 'c']);
    expect(config.input?.[0]?.dims).toEqual([3n, 224n]);
    expect(config.input?.[1]?.dims).toEqual([1n, -1n]);
    expect(config.input?.[2]?.dims).toEqual([]);
  });

  it('reads map fields as { key value } entries, one per line or in a list', () => {
    const config = ok(`
      parameters { key: "EXECUTION_ENV_PATH" value: { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }
      parameters [ { key: "a" value { string_value: "1" } }, { key: "b" value: { } } ]
      cc_model_filenames { key: "7.5" value: "t4.plan" }
      metric_tags { key: "team" value: "search" }
      dynamic_batching { priority_levels: 2 default_priority_level: 1
        priority_queue_policy { key: 2 value: { timeout_action: DELAY max_queue_size: 4 } } }
    `);
    const ensemble = ok(
      'ensemble_scheduling { step { model_name: "x" input_map { key: "IN" value: "in" } output_map [ { key: "OUT" value: "out" } ] } }',
    );
    expect(config.parameters).toEqual({
      EXECUTION_ENV_PATH: { string_value: '$$TRITON_MODEL_DIRECTORY/env.tar.gz' },
      a: { string_value: '1' },
      b: {},
    });
    expect(config.cc_model_filenames).toEqual({ '7.5': 't4.plan' });
    expect(config.metric_tags).toEqual({ team: 'search' });
    expect(config.dynamic_batching?.priority_queue_policy).toEqual({ '2': { timeout_action: 'DELAY', max_queue_size: 4 } });
    expect(ensemble.ensemble_scheduling?.step?.[0]?.input_map).toEqual({ IN: 'in' });
    expect(ensemble.ensemble_scheduling?.step?.[0]?.output_map).toEqual({ OUT: 'out' });
  });

  it('decodes single- and double-quoted strings with C escapes and joins adjacent literals', () => {
    const config = ok(String.raw`name: 'it\'s' " \"q\"" 'tab\there' '\101\x42\u00e9\U0001F600\n'`);
    expect(config.name).toBe(`it's "q"tab\there` + 'ABé😀\n');
  });

  it('passes UTF-8 text through unchanged', () => {
    expect(ok('name: "模型-é"').name).toBe('模型-é');
  });

  it('reads decimal, hex, octal and negative integers', () => {
    const config = ok('max_batch_size: 0x10 input { dims: 017 dims: -1 dims: 0 dims: 9223372036854775807 }');
    expect(config.max_batch_size).toBe(16);
    expect(config.input?.[0]?.dims).toEqual([15n, -1n, 0n, 9223372036854775807n]);
  });

  it('reads integers of every length exactly, with no negative zero', () => {
    // 15 digits and fewer take the short path; 16 and more the exact BigInt one.
    const config = ok(
      'max_batch_size: -0 input { dims: -0 dims: 1024 dims: 1025 dims: -999999999999999 dims: 9007199254740993 ' +
        'dims: -9223372036854775808 }',
    );
    expect(Object.is(config.max_batch_size, 0)).toBe(true);
    expect(config.input?.[0]?.dims).toEqual([0n, 1024n, 1025n, -999999999999999n, 9007199254740993n, -9223372036854775808n]);
    expect(config.input?.[0]?.dims?.every((d) => typeof d === 'bigint')).toBe(true);
  });

  it('keeps every value of a repeated field given over several lines and lists, in order', () => {
    const config = ok('input { name: "a" dims: [ 1, 2 ] dims: 3 dims: [ 4 ] }\ninput { name: "b" }\ninput [ { name: "c" } ]');
    expect(config.input?.map((i) => i.name)).toEqual(['a', 'b', 'c']);
    expect(config.input?.[0]?.dims).toEqual([1n, 2n, 3n, 4n]);
  });

  it('reads floats with exponents, inf, nan and an f suffix, and integers in float fields', () => {
    const config = ok(`
      sequence_batching { direct { minimum_slot_utilization: 1.5e-1 }
        control_input { control { fp32_false_true: [ -inf, 1f, 2.5F, .5, 3, nan, Infinity ] } } }
      model_metrics { metric_control { histogram_options { buckets: [ 1E3, 0x10 ] } } }
    `);
    expect(config.sequence_batching?.direct?.minimum_slot_utilization).toBeCloseTo(0.15);
    const values = config.sequence_batching?.control_input?.[0]?.control?.[0]?.fp32_false_true;
    expect(values?.slice(0, 5)).toEqual([-Infinity, 1, 2.5, 0.5, 3]);
    expect(Number.isNaN(values?.[5])).toBe(true);
    expect(values?.[6]).toBe(Infinity);
    expect(config.model_metrics?.metric_control?.[0]?.histogram_options?.buckets).toEqual([1000, 16]);
  });

  it('reads bools as true/false/True/False/t/f/1/0', () => {
    const config = ok('sequence_batching { control_input { control { bool_false_true: [ true, false, True, False, t, f, 1, 0 ] } } }');
    expect(config.sequence_batching?.control_input?.[0]?.control?.[0]?.bool_false_true).toEqual([
      true, false, true, false, true, false, true, false,
    ]);
  });

  it('reads enums by name or by number', () => {
    const config = ok('input { data_type: 11 format: FORMAT_NHWC } instance_group { kind: 2 }');
    expect(config.input?.[0]?.data_type).toBe('TYPE_FP32');
    expect(config.input?.[0]?.format).toBe('FORMAT_NHWC');
    expect(config.instance_group?.[0]?.kind).toBe('KIND_CPU');
  });

  it('takes commas and semicolons as optional separators', () => {
    expect(ok('name: "a", platform: "b"; max_batch_size: 1,').max_batch_size).toBe(1);
  });

  it('leaves fields that are not written absent and keeps 64-bit integers exact in JSON', () => {
    const json = JSON.parse(configToJson(ok('name: "a" input { dims: [ 9007199254740993 ] data_type: TYPE_INT64 }')));
    expect(json).toEqual({ name: 'a', input: [{ dims: ['9007199254740993'], data_type: 'TYPE_INT64' }] });
  });
});

describe('config.pbtxt parser: faults reported with file, line, column and a caret', () => {
  it('reports a syntax error where it is and stops there', () => {
    const [d, ...rest] = errors('name: "a"\ninput {\n  name "x"\n}');
    expect(rest).toEqual([]);
    expect(d).toMatchObject({ severity: 'error', code: 'syntax-error', file: 'm/config.pbtxt', line: 3, column: 8, model: 'm' });
    expect(d!.message).toContain('Expected ":"');
    expect(d!.excerpt).toBe('  name "x"\n       ^');
  });

  it.each([
    ['an unclosed message', 'input {', /before the end of the file/],
    ['a stray closing brace', 'name: "a" }', /Expected identifier, got: "}"/],
    ['an unterminated string', 'name: "abc', /Unexpected end of string|cannot cross line/],
    ['a string across lines', 'name: "a\nb"', /cannot cross line boundaries/],
    ['a bad escape', String.raw`name: "\q"`, /Invalid escape sequence/],
    ['a number glued to a name', 'max_batch_size: 8abc', /Need space between number and identifier/],
    ['an octal literal with 8', 'max_batch_size: 08', /leading zero must be in octal/],
    ['a list without a closing bracket', 'input { dims: [ 1, 2 }', /Expected "," or "\]"/],
    ['a value missing at the end', 'name:', /end of file/],
    ['an extension', '[ext.field]: 1', /Extensions/],
    ['an unexpected character', 'name: "a" @', /Unexpected character "@"/],
  ])('reports %s as a syntax error', (_case, text, pattern) => {
    const diagnostics = errors(text);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]!.code).toBe('syntax-error');
    expect(diagnostics[0]!.message).toMatch(pattern);
  });

  it('names an unknown field with protobuf\'s wording and suggests the nearest one', () => {
    const [d] = errors('input { name: "x" dimz: [ 3 ] }');
    expect(d).toMatchObject({ code: 'unknown-field', line: 1, column: 19 });
    expect(d!.message).toBe('Message type "inference.ModelInput" has no field named "dimz". Did you mean "dims"?');
  });

  it('goes on after an unknown field so that later faults are reported too', () => {
    const codes = errors('foo { bar: [1, {x: 2}] } baz: "q" max_batch_size: -1.5').map((d) => d.code);
    expect(codes).toEqual(['unknown-field', 'unknown-field', 'wrong-value-type']);
  });

  it('reports each value a template leaves blank once, on its own line, and reads the field after it as a field', () => {
    // odlab-ai/odlab-triton's model_repository/ensemble/config.pbtxt: `max_batch_size:` then `input [`; protobuf
    // stops at 6:1 ("Expected integer, got: input"); the rest is not an extension ("[...]") nor a value of the blank.
    const text = 'name: "e"\nmax_batch_size: \n\ninput [\n  {\n    name: \n    data_type: \n    dims: \n  }\n]\n';
    const found = errors(text).map((d) => [d.line, d.code, d.message]);
    expect(found).toEqual([
      [4, 'wrong-value-type', 'Expected integer for int32 field "max_batch_size", got: "input".'],
      [7, 'wrong-value-type', 'Expected string for field "name", got: "data_type". Put the value in double quotes.'],
      [8, 'unknown-enum-value', expect.stringContaining('Unknown enumeration value of "dims" for field "data_type".')],
      [9, 'wrong-value-type', 'Expected integer for int64 field "dims", got: "}".'],
    ]);
    // A name that is a value (an enum word, an identifier in a number's place) is still consumed as one.
    expect(errors('max_batch_size: foo\nname: "e"').map((d) => d.line)).toEqual([1]);
    expect(errors('input { data_type: TYPE_FP3 name: "x" }').map((d) => d.code)).toEqual(['unknown-enum-value']);
  });

  it('rejects an unknown enum value and suggests the nearest', () => {
    const [d] = errors('instance_group { kind: KIND_GPUS }');
    expect(d).toMatchObject({ code: 'unknown-enum-value', column: 24 });
    expect(d!.message).toBe('Unknown enumeration value of "KIND_GPUS" for field "kind". Did you mean "KIND_GPU"?');
    // proto3 enums are open: protobuf keeps a number that names no value, so it is a warning, not a parse error.
    const numeric = parseModelConfig('input { data_type: 99 }');
    expect(numeric.diagnostics).toMatchObject([{ severity: 'warning', code: 'unknown-enum-number' }]);
    expect(numeric.config.input?.[0]?.data_type).toBe(99);
  });

  it("suggests Triton's name for another framework's data type name, not the nearest spelling", () => {
    // By edit distance alone TYPE_FLOAT32 is nearer TYPE_UINT32 than TYPE_FP32.
    const message = (type: string) => errors(`input { name: "t" data_type: ${type} dims: [1] }`)[0]!.message;
    expect(message('TYPE_FLOAT32')).toBe('Unknown enumeration value of "TYPE_FLOAT32" for field "data_type". Did you mean "TYPE_FP32"?');
    expect(message('TYPE_FLOAT16')).toContain('Did you mean "TYPE_FP16"?');
    expect(message('TYPE_DOUBLE')).toContain('Did you mean "TYPE_FP64"?');
    expect(message('TYPE_UINT33')).toContain('Did you mean "TYPE_UINT32"?');
  });

  it('refuses a UTF-8 byte order mark once, as protobuf does, and still reads the rest', () => {
    // protoc 3.21's TextFormat parser: "1:1: Interpreting non ascii codepoint 239." then "Expected identifier".
    const result = parseModelConfig('\ufeffname: "m"\nmax_batch_size: 8\n');
    expect(result.diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([['byte-order-mark', 1, 1]]);
    expect(result.diagnostics[0]!.message).toContain('Save config.pbtxt as UTF-8 without BOM.');
    expect(result.config).toEqual({ name: 'm', max_batch_size: 8 });
    // Columns on the first line are counted as an editor shows them, after the invisible mark.
    expect(errors('\ufeffname: 5')[1]).toMatchObject({ line: 1, column: 7 });
  });

  it('says where a block that is never closed was opened', () => {
    expect(errors('name: "m"\ninstance_group {\n  kind: KIND_GPU\n')[0]!.message).toBe(
      'Expected "}" before the end of the file. The "instance_group" block opened at line 2, column 16 is never closed: ' +
        'add its closing "}" (or ">") where the block ends.',
    );
    const [d] = errors('name: "m"\ninput [\n  {\n    name: "x"\n    dims: [1]\n]\noutput [ { name: "y" } ]\n');
    expect(d).toMatchObject({ line: 6, column: 1 });
    expect(d!.message).toContain('The "input" block opened at line 3, column 3 is never closed');
  });

  it('turns TYPE_BYTES into advice to write TYPE_STRING', () => {
    const [d] = errors('input { name: "t" data_type: TYPE_BYTES dims: [1] }');
    expect(d!.code).toBe('type-bytes');
    expect(d!.message).toContain('TYPE_STRING');
  });

  it.each([
    ['a string in an integer field', 'max_batch_size: "8"', /Expected integer/],
    ['a float in an integer field', 'max_batch_size: 1.5', /floating-point number "1.5"/],
    ['a number in a string field', 'name: 5', /Expected string/],
    ['a word in a bool field', 'response_cache { enable: yes }', /Invalid value for boolean field "enable". Value: "yes"/],
    ['a message in a scalar field', 'max_batch_size { }', /Expected ":", found "\{"/],
    ['a message after ":" in a scalar field', 'max_batch_size: { }', /not a message/],
    ['a list in a non-repeated field', 'name: [ "a" ]', /not repeated/],
    ['a scalar in a message field', 'dynamic_batching: 5', /Expected "\{" or "<"/],
  ])('rejects %s', (_case, text, pattern) => {
    const diagnostics = errors(text);
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics[0]!.message).toMatch(pattern);
  });

  it.each([
    ['int32', 'max_batch_size: 2147483648', 'max_batch_size: 2147483647', 'max_batch_size: -2147483648'],
    [
      'uint32',
      'ensemble_scheduling { max_inflight_requests: -1 }',
      'ensemble_scheduling { max_inflight_requests: 4294967295 }',
      'ensemble_scheduling { max_inflight_requests: 0 }',
    ],
    ['int64', 'input { dims: 9223372036854775808 }', 'input { dims: -9223372036854775808 }', 'input { dims: 0x7fffffffffffffff }'],
    [
      'uint64',
      'dynamic_batching { max_queue_delay_microseconds: 18446744073709551616 }',
      'dynamic_batching { max_queue_delay_microseconds: 18446744073709551615 }',
      'dynamic_batching { max_queue_delay_microseconds: 0 }',
    ],
  ])('checks the range of %s fields', (_type, outside, ...inside) => {
    const [d] = errors(outside);
    expect(d!.code).toBe('integer-out-of-range');
    expect(d!.message).toMatch(/^Integer out of range/);
    for (const text of inside) expect(errors(text)).toEqual([]);
  });

  it('leaves out a repeated field none of whose values parse, and keeps the ones that do', () => {
    const none = parseModelConfig('input { name: "a" dims: [ "x" ] }', { file: 'm/config.pbtxt' });
    expect(none.diagnostics.map((d) => d.code)).toEqual(['wrong-value-type']);
    expect(none.config.input?.[0]).toEqual({ name: 'a' });
    const some = parseModelConfig('input { dims: [ 1, "x", 2 ] }', { file: 'm/config.pbtxt' });
    expect(some.diagnostics.map((d) => d.code)).toEqual(['wrong-value-type']);
    expect(some.config.input?.[0]?.dims).toEqual([1n, 2n]);
  });

  it('rejects a non-repeated field given twice', () => {
    const [d] = errors('name: "a"\nname: "b"');
    expect(d).toMatchObject({ code: 'duplicate-field', line: 2, column: 1 });
    expect(d!.message).toContain('Non-repeated field "name" is specified multiple times');
  });

  it('accepts a proto3 scalar given again after it held its default, as protobuf does (it was never "set")', () => {
    expect(ok('max_batch_size: 0\nmax_batch_size: 4').max_batch_size).toBe(4);
    expect(ok('name: ""\nname: "m"').name).toBe('m');
    expect(ok('input { data_type: TYPE_INVALID data_type: TYPE_FP32 }').input?.[0]?.data_type).toBe('TYPE_FP32');
    expect(ok('response_cache { enable: false enable: true }').response_cache).toEqual({ enable: true });
    const [d] = errors('max_batch_size: 4\nmax_batch_size: 0');
    expect(d).toMatchObject({ code: 'duplicate-field', line: 2 });
    expect(d!.message).toBe('Non-repeated field "max_batch_size" is specified multiple times (already set at line 1). Keep one of them.');
  });

  it('counts -0.0 in a float field as set (protobuf compares the bits), and messages and oneof members once given', () => {
    expect(errors('sequence_batching { direct { minimum_slot_utilization: -0.0 minimum_slot_utilization: 0.5 } }')[0]!.code).toBe(
      'duplicate-field',
    );
    expect(errors('sequence_batching { direct { minimum_slot_utilization: 0.0 minimum_slot_utilization: 0.5 } }')).toEqual([]);
    expect(errors('optimization { } optimization { }')[0]!.code).toBe('duplicate-field');
    expect(errors('model_warmup { inputs { key: "a" value { zero_data: false zero_data: true } } }')[0]!.code).toBe('duplicate-field');
    expect(errors('parameters { key: "" key: "a" value { string_value: "x" } }')).toEqual([]);
  });

  it('rejects two members of one oneof', () => {
    const diagnostics = errors('dynamic_batching { }\nsequence_batching { }\nensemble_scheduling { }');
    expect(diagnostics.map((d) => d.code)).toEqual(['oneof-conflict', 'oneof-conflict']);
    expect(diagnostics[0]!.message).toContain('another member of oneof "scheduling_choice"');
    expect(errors('version_policy { latest { } all { } }')[0]!.code).toBe('oneof-conflict');
  });

  it('warns on a map key given twice (protobuf keeps the last)', () => {
    const result = parseModelConfig('metric_tags { key: "a" value: "1" } metric_tags { key: "a" value: "2" }');
    expect(result.diagnostics.map((d) => [d.severity, d.code])).toEqual([['warning', 'duplicate-map-key']]);
    expect(result.config.metric_tags).toEqual({ a: '2' });
  });

  it('treats __proto__ as an ordinary map key', () => {
    const config = ok('metric_tags { key: "__proto__" value: "x" }');
    expect(Object.keys(config.metric_tags!)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it('bounds nesting depth with a diagnostic instead of a stack overflow', () => {
    const deep = 'optimization ' + '{ unknown '.repeat(MAX_NESTING_DEPTH + 5) + '}'.repeat(MAX_NESTING_DEPTH + 6);
    const diagnostics = errors(deep);
    expect(diagnostics.some((d) => /nesting is deeper than 100/.test(d.message))).toBe(true);
    const deeper = 'input ' + '{ '.repeat(200000);
    expect(() => errors(deeper)).not.toThrow();
  });

  it('refuses a 50 MB file with one diagnostic', () => {
    const big = 'name: "' + 'x'.repeat(50 * 1024 * 1024) + '"';
    expect(big.length).toBeGreaterThan(MAX_CONFIG_BYTES);
    const diagnostics = errors(big);
    expect(diagnostics.map((d) => d.code)).toEqual(['config-too-large']);
  });
});

describe('config.pbtxt parser: deferred positions', () => {
  const text =
    'name: "e"\nplatform: "ensemble"\ninput [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] },\n' +
    '  { name: "B" data_type: TYPE_FP32 dims: [ 2 ] } ]\nensemble_scheduling { step [ { model_name: "m" model_version: -1\n' +
    '  input_map { key: "x" value: "A" } output_map { key: "y" value: "B" } } ] }\nparameters { key: "k" value: { string_value: "v" } }\n';

  it('finds, when first asked, the same place of every message, field and map entry as a parse that records them', () => {
    const eager = parseModelConfig(text);
    const deferred = parseModelConfig(text, { deferPositions: true });
    const c = deferred.config;
    const e = eager.config;
    const step = c.ensemble_scheduling!.step![0]!;
    const eagerStep = e.ensemble_scheduling!.step![0]!;
    const pairs: [object | undefined, object | undefined, string | undefined, number | undefined][] = [
      [c, e, 'platform', undefined],
      [c, e, 'input', 1],
      [c.input![1], e.input![1], 'dims', undefined],
      [c.input![1], e.input![1], undefined, undefined],
      [step, eagerStep, 'model_version', undefined],
      [step.output_map, eagerStep.output_map, 'y', undefined],
      [c.parameters, e.parameters, 'k', undefined],
    ];
    for (const [kept, twin, field, index] of pairs) {
      const at = deferred.positions.of(kept, field, index);
      expect(at).toBeDefined();
      expect(at).toEqual(eager.positions.of(twin, field, index));
    }
    expect(deferred.positions.ofMapValue(step.input_map, 'x')).toEqual(eager.positions.ofMapValue(eagerStep.input_map, 'x'));
    expect(deferred.positions.of(c, 'input', 1)).toMatchObject({ line: 4, column: 3 });
    // An object that is not of this parse has no place, deferred or not.
    expect(deferred.positions.of({ name: 'e' }, 'name')).toBeUndefined();
  });
});
