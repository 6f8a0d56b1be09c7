import fc from 'fast-check';
import { parseModelConfig } from '../../lib/config/parse';

const VALID = `name: "ensemble"
platform: "ensemble"
max_batch_size: 16
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ 1 ] } ]
output < name: 'finaloutput' data_type: 11 dims: [ 384 ] >
ensemble_scheduling { step [ { model_name: "preprocess" model_version: -1
  input_map { key: "INPUT0" value: "INPUT0" } output_map { key: "OUTPUT0" value: "token_ids" } } ] }
parameters: { key: "p" value: { string_value: "a\\tb\\x41\\101" } }
sequence_batching { control_input { control { fp32_false_true: [ -inf, 1.5e3f ] } } }
`;

/** Edits that keep most of the text but break it in the ways people do: cut, duplicate, insert, replace. */
const mutated = fc
  .tuple(
    fc.array(
      fc.tuple(
        fc.nat(VALID.length),
        fc.nat(12),
        fc.oneof(
          fc.constantFrom('{', '}', '<', '>', '[', ']', ':', '"', "'", '\\', '-', '#', '\n', ',', ';', '0x', '1e', 'inf', ' '),
          fc.string({ maxLength: 4 }),
        ),
      ),
      { minLength: 1, maxLength: 6 },
    ),
  )
  .map(([edits]) => {
    let text = VALID;
    for (const [at, cut, insert] of edits) {
      const i = at % (text.length + 1);
      text = text.slice(0, i) + insert + text.slice(i + cut);
    }
    return text;
  });

describe('config.pbtxt parser on arbitrary input', () => {
  it('returns diagnostics and never throws, for random text and mutated valid configs (10k runs)', () => {
    const input = fc.oneof(
      { weight: 2, arbitrary: mutated },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')) },
    );
    fc.assert(
      fc.property(input, (text) => {
        const result = parseModelConfig(text, { file: 'config.pbtxt' });
        const wellFormed = result.diagnostics.every(
          (d) => d.line! >= 1 && d.column! >= 1 && d.message.length > 0 && d.excerpt!.includes('^'),
        );
        return wellFormed && typeof result.config === 'object';
      }),
      { numRuns: 10_000 },
    );
  });
});
