// Slow: ~55 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone; protoc's answers are cached after).
// The config.pbtxt parser against protobuf's own TextFormat parser (protoc, C++, the parser Triton uses): the same
// accept/reject and the same values on every config in the real-world corpus, the examples and the fixtures, on
// mutations of them, and on the text-format edge cases that matter (a proto3 scalar holding its default is not "set").
// The .proto is written from our descriptor; it was checked field by field against Triton's model_config.proto
// (common @ 83adf7c: same messages, fields, types, labels, oneofs and enum values; only field numbers differ).

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MODEL_CONFIG_DESCRIPTOR } from '../../lib/config/model-config.descriptor';
import { parseModelConfig } from '../../lib/config/parse';
import { canonical, sameValue } from './protobuf-canonical';
import { ORACLE_NEEDS, OracleResult, runOracle } from './protobuf-oracle';
import { suiteFor } from '../tools';

const ROOT = join(__dirname, '..', '..');

function pbtxtFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'cdk.out' ? [] : pbtxtFiles(path);
    return e.name.endsWith('.pbtxt') ? [path] : [];
  });
}

/** A small deterministic PRNG, so the mutations are the same on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Edits that people make, or that break text in the ways text breaks. Three per config, chosen by the PRNG. */
function mutations(texts: readonly string[]): string[] {
  const rand = random(20261130);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const out: string[] = [];
  const scalarLine = /^(\s*)([a-z_]+)\s*:\s*("[^"\n]*"|-?[0-9][\w.+-]*|[A-Za-z_]\w*)\s*$/;
  const numbers = [
    '0', '-0', '1', '0x10', '010', '2147483648', '-2147483649', '4294967296', '1.5', '1e3', '-1',
    '9223372036854775808', 'inf', 'nan', '1f',
  ];
  const junk = [
    '{', '}', '<', '>', '[', ']', ':', '"', "'", '\\', '-', '#', '\n', ',', ';', '0x', '1e', 'inf', ' ',
    'TYPE_BYTES', 'true', '0.', '.5',
  ];
  texts.forEach((text, index) => {
    if (index % 2 === 1) return;
    const lines = text.split('\n');
    const scalars = lines.map((l, i) => [i, scalarLine.exec(l)] as const).filter(([, m]) => m !== null);
    for (let n = 0; n < 3; n++) {
      const op = Math.floor(rand() * 4);
      if (op === 0 && scalars.length > 0) {
        // The field again, before or after, with its default, the same or another value.
        const [i, m] = pick(scalars);
        const value = m![3]!.startsWith('"')
          ? pick(['""', m![3]!, '"x"'])
          : /^[A-Za-z]/.test(m![3]!)
            ? pick([m![3]!, '0', 'true', 'false'])
            : pick(['0', m![3]!, '7']);
        const copy = `${m![1]}${m![2]}: ${value}`;
        const at = rand() < 0.5 ? i : i + 1;
        out.push([...lines.slice(0, at), copy, ...lines.slice(at)].join('\n'));
      } else if (op === 1 && scalars.length > 0) {
        // Another number where a value is.
        const [i, m] = pick(scalars);
        const copy = [...lines];
        copy[i] = `${m![1]}${m![2]}: ${pick(numbers)}`;
        out.push(copy.join('\n'));
      } else {
        // Cut, insert or replace a few characters.
        const at = Math.floor(rand() * (text.length + 1));
        const cut = Math.floor(rand() * 6);
        out.push(text.slice(0, at) + pick(junk) + text.slice(at + cut));
      }
    }
  });
  return out;
}

/** The text-format edge cases named in issue 10.8, and their neighbours, spelled out. */
const EDGES = [
  'max_batch_size: 0\nmax_batch_size: 4',
  'max_batch_size: 4\nmax_batch_size: 0',
  'max_batch_size: 0\nmax_batch_size: 0',
  'name: ""\nname: "x"',
  'name: "x"\nname: ""',
  'input { data_type: TYPE_INVALID data_type: TYPE_FP32 }',
  'input { data_type: 0 data_type: TYPE_FP32 }',
  'input { data_type: TYPE_FP32 data_type: TYPE_INVALID }',
  'response_cache { enable: false enable: true }',
  'response_cache { enable: true enable: false }',
  'instance_group { kind: KIND_AUTO kind: KIND_GPU }',
  'dynamic_batching { max_queue_delay_microseconds: 0 max_queue_delay_microseconds: 100 }',
  'sequence_batching { direct { minimum_slot_utilization: 0.0 minimum_slot_utilization: 0.5 } }',
  'sequence_batching { direct { minimum_slot_utilization: -0.0 minimum_slot_utilization: 0.5 } }',
  'sequence_batching { direct { minimum_slot_utilization: 1e-50 minimum_slot_utilization: 0.5 } }',
  'sequence_batching { direct { minimum_slot_utilization: -1e-50 minimum_slot_utilization: 0.5 } }',
  'model_warmup { inputs { key: "a" value { zero_data: false random_data: true } } }',
  'model_warmup { inputs { key: "a" value { zero_data: false zero_data: true } } }',
  'model_warmup { batch_size: 0 batch_size: 1 }',
  'parameters { key: "" key: "a" value { string_value: "x" } }',
  'parameters { key: "a" key: "b" }',
  'parameters { key: "a" value { } value { string_value: "x" } }',
  'dynamic_batching { priority_queue_policy { key: 0 key: 3 value { } } }',
  'version_policy { latest { num_versions: 0 } latest { } }',
  'version_policy { latest { } all { } }',
  'dynamic_batching { } dynamic_batching { }',
  'dynamic_batching { } sequence_batching { }',
  'max_batch_size: -0',
  'input { dims: [] dims: 1 }',
  'optimization { graph { level: 0 } graph { level: 1 } }',
];

// .ci/run installs the oracle and sets CI: there a missing oracle is a failure; elsewhere the suite is skipped.
suiteFor(ORACLE_NEEDS)("config.pbtxt parser and protobuf's TextFormat", () => {
  const files = [...pbtxtFiles(join(ROOT, 'test')), ...pbtxtFiles(join(ROOT, 'examples'))];
  const texts = files.map((f) => readFileSync(f, 'utf8'));
  const mutated = mutations(texts);
  const inputs = [...texts, ...mutated, ...EDGES];
  let oracle: OracleResult[] = [];

  beforeAll(async () => {
    oracle = await runOracle(MODEL_CONFIG_DESCRIPTOR, inputs);
  }, 180_000);

  /** Every input where our verdict or values differ from protobuf's, described. */
  function disagreements(from: number, to: number, name: (i: number) => string): string[] {
    const out: string[] = [];
    for (let i = from; i < to; i++) {
      const ours = parseModelConfig(inputs[i]!);
      const accepted = !ours.diagnostics.some((d) => d.severity === 'error');
      const theirs = oracle[i]!;
      if (accepted !== theirs.accepted) {
        const verdicts =
          `ours ${accepted ? 'accepts' : `rejects (${ours.diagnostics[0]?.message})`}, ` +
          `protobuf ${theirs.accepted ? 'accepts' : `rejects (${theirs.error})`}`;
        out.push(`${verdicts}: ${name(i)}`);
      } else if (accepted) {
        const value = canonical(MODEL_CONFIG_DESCRIPTOR, 'ModelConfig', ours.config as Record<string, unknown>);
        if (!sameValue(value, theirs.value)) {
          out.push(`values differ: ${name(i)}\n  ours     ${JSON.stringify(value)}\n  protobuf ${JSON.stringify(theirs.value)}`);
        }
      }
    }
    return out;
  }

  it(`agrees on every config.pbtxt in the corpus, the examples and the fixtures (${files.length} files)`, () => {
    expect(files.length).toBeGreaterThan(300);
    expect(disagreements(0, texts.length, (i) => relative(ROOT, files[i]!))).toEqual([]);
  });

  it(`agrees on ${mutated.length} mutations of them, accepted and rejected alike`, () => {
    const start = texts.length;
    expect(disagreements(start, start + mutated.length, (i) => `mutation ${i - start}: ${JSON.stringify(inputs[i])}`)).toEqual([]);
    // Both verdicts occur: the mutations test rejection as well as acceptance.
    const verdicts = new Set(oracle.slice(start, start + mutated.length).map((r) => r.accepted));
    expect(verdicts).toEqual(new Set([true, false]));
  });

  it('agrees on the scalar-default edge cases: a proto3 scalar holding its default is not "set"', () => {
    const start = texts.length + mutated.length;
    expect(disagreements(start, inputs.length, (i) => JSON.stringify(inputs[i]))).toEqual([]);
    const verdict = (text: string) => oracle[inputs.lastIndexOf(text)]!.accepted;
    expect(verdict('max_batch_size: 0\nmax_batch_size: 4')).toBe(true);
    expect(verdict('max_batch_size: 4\nmax_batch_size: 0')).toBe(false);
  });
});
