// The protoc oracle reads many texts in one protoc run (protobuf-oracle.ts, answerAll): its answers must be the ones
// protoc gives each text alone, also for texts that close or leave open the item they are batched in.

import { MODEL_CONFIG_DESCRIPTOR } from '../../lib/config/model-config.descriptor';
import { ORACLE_NEEDS, runOracle, runOracleAlone } from './protobuf-oracle';
import { suiteFor } from '../tools';

const TEXTS = [
  'name: "a"',
  'name: "a" }',
  'name: "a" } max_batch_size: 1',
  'name: "a" } : 1',
  'name: "b" max_batch_size: 4',
  'input { name: "x"',
  'input < name: "x" }',
  'name: "a" >',
  'name: "abc',
  'name: "a\nb"',
  'mme_oracle_item { }',
  '',
  '# only a comment',
  'max_batch_size: 1\nmax_batch_size: 2',
  'name: "}" }',
  "name: '{' max_batch_size: 2 }",
  'max_batch_size: 1 # } in a comment\n}',
  'input [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]\nmax_batch_size: 8',
  'input { name: "x" }\n}\ninput { name: "y" }',
];

suiteFor(ORACLE_NEEDS)('the protoc oracle', () => {
  const cache = process.env.MME_PROTOBUF_ORACLE_CACHE;
  beforeAll(() => (process.env.MME_PROTOBUF_ORACLE_CACHE = 'off'));
  afterAll(() => {
    if (cache === undefined) delete process.env.MME_PROTOBUF_ORACLE_CACHE;
    else process.env.MME_PROTOBUF_ORACLE_CACHE = cache;
  });

  it('answers a batch of texts as protoc answers each alone, rejections and their messages included', async () => {
    const batched = await runOracle(MODEL_CONFIG_DESCRIPTOR, TEXTS);
    // Each text in its own protoc run (runOracleAlone shares only the .proto's compilation and the decoding python).
    const alone = await runOracleAlone(MODEL_CONFIG_DESCRIPTOR, TEXTS);
    expect(alone).toHaveLength(TEXTS.length);
    expect(batched).toEqual(alone);
    // Both verdicts, and messages at the text's own line: the batch's other lines never show.
    expect(batched.map((r) => r.accepted)).toEqual([
      true, false, false, false, true, false, false, false, false, false, false, true, true, false, false, false, false, true, false,
    ]);
    expect(batched[13]!.error).toBe('input:2:15: Non-repeated field "max_batch_size" is specified multiple times.\nFailed to parse input.');
    expect(batched[4]!.value).toEqual({ name: 'b', max_batch_size: 4 });
  });
});
