// The protoc oracle reads many texts in one protoc run (protobuf-oracle.ts, answerAll): its answers must be the ones
// protoc gives each text alone, also for texts that close or leave open the item they are batched in.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODEL_CONFIG_DESCRIPTOR } from '../../lib/config/model-config.descriptor';
import { ORACLE_NEEDS, runOracle, runOracleAlone } from './protobuf-oracle';
import { suiteFor } from '../tools';
import { merge, ORACLES } from '../../scripts/record-oracle-answers';

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

  it('answers from a recording made by the same protoc, asks protoc again about some of it, and fails when protoc says otherwise',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mme-protoc-recording-'));
      const recording = join(dir, 'protoc-answers.json');
      const variables = ['MME_PROTOBUF_ORACLE_CACHE', 'MME_PROTOBUF_ORACLE_RECORDING', 'MME_ORACLE_RECORD', 'MME_ORACLE_RECHECK'] as const;
      const previous = variables.map((name) => process.env[name]);
      let run = 0;
      // Texts protoc accepts and rejects, the last one "b". Each call as on a clean clone: an empty cache, so only the
      // recording or protoc answers.
      const texts = TEXTS.slice(0, 5);
      const oracle = () => {
        process.env.MME_PROTOBUF_ORACLE_CACHE = join(dir, `cache-${run++}`);
        return runOracle(MODEL_CONFIG_DESCRIPTOR, texts);
      };
      try {
        process.env.MME_PROTOBUF_ORACLE_RECORDING = recording;
        // Recorded as scripts/record-oracle-answers.js records: protoc asked about every text, the answers staged.
        process.env.MME_ORACLE_RECORD = join(dir, 'stage');
        const live = await oracle();
        expect(merge({ ...ORACLES.find((o) => o.name === 'protoc')!, file: recording }, join(dir, 'stage', 'protoc'), false))
          .toBe(texts.length);
        delete process.env.MME_ORACLE_RECORD;
        process.env.MME_ORACLE_RECHECK = '0';
        expect(await oracle()).toEqual(live);
        expect(live.map((r) => r.accepted)).toEqual([true, false, false, false, true]);

        // The answer comes from the recording: one it says otherwise is the answer, until protoc is asked again.
        const text = readFileSync(recording, 'utf8');
        const b = '"value":{"max_batch_size":4,"name":"b"}';
        expect(text.split(b)).toHaveLength(2);
        writeFileSync(recording, text.replace(b, '"value":{"max_batch_size":4,"name":"recorded"}'));
        expect((await oracle())[4]!.value).toEqual({ name: 'recorded', max_batch_size: 4 });
        process.env.MME_ORACLE_RECHECK = String(texts.length);
        await expect(oracle()).rejects.toThrow(
          /^protoc's answer for this text differs from the one recorded in .*protoc-answers\.json:\nname: "b" max_batch_size: 4\n/,
        );

        // Recorded by another protoc: not used. Off: not used.
        process.env.MME_ORACLE_RECHECK = '0';
        writeFileSync(recording, text.replace(/"protoc": "[^"]*"/, '"protoc": "libprotoc 0.0.1"'));
        expect(await oracle()).toEqual(live);
        writeFileSync(recording, text.replace(b, '"value":{"max_batch_size":4,"name":"recorded"}'));
        process.env.MME_PROTOBUF_ORACLE_RECORDING = 'off';
        expect(await oracle()).toEqual(live);
      } finally {
        variables.forEach((name, i) => (previous[i] === undefined ? delete process.env[name] : (process.env[name] = previous[i])));
        rmSync(dir, { recursive: true, force: true });
      }
    });
});
