// The examples' Triton python models: each is a TritonPythonModel with execute(), loads nothing from the internet,
// and computes what the example documents — run outside Triton with a test double of triton_python_backend_utils.

import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { EXAMPLES_DIR, readConfig } from './example-repositories';
import { findPython, runPythonModel, runPythonModels, type ModelJob, type ResponseJson, TensorJson } from './python-model-runner';
import { itWithTools, type PythonModule } from '../tools';

const SENTIMENT = join(EXAMPLES_DIR, 'sentiment_onnx');
const HF = join(EXAMPLES_DIR, 'ensemble_hf');

/** Every `<model>/<version>/model.py` under examples/, except the CDK app's tree. */
function pythonModels(dir: string = EXAMPLES_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'existing-app' || e.name === 'node_modules' ? [] : pythonModels(path);
    return e.name === 'model.py' ? [path] : [];
  });
}

/** Runs the body only where a python3 with `modules` exists; elsewhere the test is listed as skipped, with why. */
function itWithPython(name: string, modules: string[], body: (python: string) => void): void {
  if (modules.every((m): m is PythonModule => m === 'numpy' || m === 'onnx')) {
    // What CI installs follows the rule of test/tools.ts (skipped here, failing under CI).
    itWithTools(name, { python: modules }, (found) => body(found.python!));
    return;
  }
  // Optional extras CI does not install (tokenizers): skipped wherever they are missing.
  const found = findPython(modules);
  if ('reason' in found) it.skip(`${name} — skipped: ${found.reason}`, () => undefined);
  else it(name, () => body(found.python));
}

const text = (values: string[]): TensorJson => ({ datatype: 'BYTES', shape: [values.length, 1], data: values });

describe('python models of the examples', () => {
  const files = pythonModels();

  it('finds the four python models of sentiment_onnx and ensemble_hf', () => {
    expect(files.map((f) => relative(EXAMPLES_DIR, f)).sort()).toEqual([
      'ensemble_hf/postprocess/1/model.py',
      'ensemble_hf/preprocess/1/model.py',
      'sentiment_onnx/postprocess/1/model.py',
      'sentiment_onnx/preprocess/1/model.py',
    ]);
  });

  it.each(files.map((f) => [relative(EXAMPLES_DIR, f), f]))('%s defines TritonPythonModel.execute', (_name, file) => {
    const source = readFileSync(file, 'utf8');
    expect(source).toMatch(/^class TritonPythonModel\b/m);
    expect(source).toMatch(/^ {4}(async )?def execute\(self, requests\):/m);
  });

  it.each(files.map((f) => [relative(EXAMPLES_DIR, f), f]))('%s downloads nothing and needs no torch', (_n, file) => {
    const source = readFileSync(file, 'utf8');
    expect(source).not.toMatch(/from_pretrained|huggingface_hub|urllib|requests\.get|^import torch|^from transformers/m);
  });
});

const expected = JSON.parse(readFileSync(join(SENTIMENT, 'expected_outputs.json'), 'utf8')) as {
  examples: { text: string; input_ids: number[]; logits: number[]; probabilities: number[]; label: string }[];
};
const SENTIMENT_PRE = join(SENTIMENT, 'preprocess', '1', 'model.py');
const SENTIMENT_POST = join(SENTIMENT, 'postprocess', '1', 'model.py');
const LONG = Array.from({ length: 20 }, () => 'great').join(' ');
/** ensemble_hf postprocess's input: two sentences of 128 tokens of width 384, 5 and 128 of them attended. */
const [BATCH, TOKENS, WIDTH] = [2, 128, 384];
const EMBEDS = Array.from({ length: BATCH * TOKENS * WIDTH }, (_, i) => Math.sin(i * 0.37) * ((i % 7) + 1));
const ATTENDED = [5, 128];
const MASK = Array.from({ length: BATCH * TOKENS }, (_, i) => (i % TOKENS < ATTENDED[Math.floor(i / TOKENS)]! ? 1 : 0));

/** What each test below runs through a model that needs only numpy. */
const numpyJobs = (): Record<string, ModelJob> => ({
  documentedIds: {
    modelPy: SENTIMENT_PRE,
    config: readConfig(SENTIMENT, 'preprocess'),
    requests: [{ text: text(expected.examples.map((e) => e.text)) }],
  },
  truncatedIds: {
    modelPy: SENTIMENT_PRE,
    config: readConfig(SENTIMENT, 'preprocess'),
    requests: [{ text: text([LONG, 'Zyzzyva qwerty', '']) }],
  },
  documentedLabels: {
    modelPy: SENTIMENT_POST,
    config: readConfig(SENTIMENT, 'postprocess'),
    requests: [
      { logits: { datatype: 'FP32', shape: [expected.examples.length, 2], data: expected.examples.flatMap((e) => e.logits) } },
    ],
  },
  batchOfRequests: {
    modelPy: SENTIMENT_POST,
    config: readConfig(SENTIMENT, 'postprocess'),
    requests: [
      { logits: { datatype: 'FP32', shape: [1, 2], data: [1000, -1000] } },
      { logits: { datatype: 'FP32', shape: [2, 2], data: [0, 0, -3, 3] } },
    ],
  },
  meanPooled: {
    modelPy: join(HF, 'postprocess', '1', 'model.py'),
    config: readConfig(HF, 'postprocess'),
    requests: [
      {
        TOKEN_EMBEDS_POST: { datatype: 'FP32', shape: [BATCH, TOKENS, WIDTH], data: EMBEDS },
        ATTENTION_POST: { datatype: 'INT32', shape: [BATCH, TOKENS], data: MASK },
      },
    ],
  },
});

let numpyResults: Record<string, ResponseJson[] | Error> | undefined;
/**
 * The responses to the job `name` of numpyJobs: every job runs in one python the first time a test asks (a python per
 * job would import numpy, a third of a second of CPU, for each), each model loaded afresh as runPythonModel loads it.
 */
function responsesTo(python: string, name: string): ResponseJson[] {
  if (!numpyResults) {
    const jobs = numpyJobs();
    const results = runPythonModels(python, Object.values(jobs));
    numpyResults = Object.fromEntries(Object.keys(jobs).map((key, i) => [key, results[i]!]));
  }
  const result = numpyResults[name]!;
  if (result instanceof Error) throw result;
  return result;
}

describe('sentiment_onnx python models', () => {
  itWithPython('preprocess turns the documented sentences into the documented word ids', ['numpy'], (python) => {
    const [response] = responsesTo(python, 'documentedIds');
    expect(response!.input_ids).toEqual({
      datatype: 'INT64',
      shape: [expected.examples.length, 16],
      data: expected.examples.flatMap((e) => e.input_ids),
    });
  });

  itWithPython('preprocess truncates long sentences, maps unknown words to 1 and pads with 0', ['numpy'], (python) => {
    const [response] = responsesTo(python, 'truncatedIds');
    const rows = response!.input_ids!.data as number[];
    const great = rows[0]!;
    expect(great).toBeGreaterThan(1);
    expect(rows.slice(0, 16)).toEqual(Array(16).fill(great));
    expect(rows.slice(16, 32)).toEqual([1, 1, ...Array(14).fill(0)]);
    expect(rows.slice(32, 48)).toEqual(Array(16).fill(0));
  });

  itWithPython('postprocess turns the documented logits into the documented probabilities and labels', ['numpy'], (python) => {
    const [response] = responsesTo(python, 'documentedLabels');
    expect(response!.label).toEqual(text(expected.examples.map((e) => e.label)));
    expect(response!.probabilities!.datatype).toBe('FP32');
    expect(response!.probabilities!.shape).toEqual([expected.examples.length, 2]);
    const want = expected.examples.flatMap((e) => e.probabilities);
    (response!.probabilities!.data as number[]).forEach((p, i) => expect(p).toBeCloseTo(want[i]!, 6));
  });

  itWithPython('postprocess answers each request of a batch of requests separately', ['numpy'], (python) => {
    const responses = responsesTo(python, 'batchOfRequests');
    expect(responses.map((r) => r.label!.data)).toEqual([['negative'], ['negative', 'positive']]);
    expect(responses[0]!.probabilities!.data).toEqual([1, 0]); // no overflow for large logits
    expect(responses[1]!.probabilities!.data[0]).toBeCloseTo(0.5, 6);
  });
});

describe('ensemble_hf python models', () => {
  itWithPython('postprocess mean-pools only the attended tokens and L2-normalises', ['numpy'], (python) => {
    const [response] = responsesTo(python, 'meanPooled');
    const out = response!.SENT_EMBED!;
    expect(out.shape).toEqual([BATCH, WIDTH]);
    for (let b = 0; b < BATCH; b++) {
      const mean = Array.from({ length: WIDTH }, (_, d) => {
        let sum = 0;
        for (let t = 0; t < ATTENDED[b]!; t++) sum += Math.fround(EMBEDS[(b * TOKENS + t) * WIDTH + d]!);
        return sum / ATTENDED[b]!;
      });
      const norm = Math.hypot(...mean);
      const row = (out.data as number[]).slice(b * WIDTH, (b + 1) * WIDTH);
      row.forEach((v, d) => expect(v).toBeCloseTo(mean[d]! / norm, 5));
      expect(Math.hypot(...row)).toBeCloseTo(1, 5);
    }
  });

  describe('preprocess', () => {
    let copy: string;
    beforeAll(() => {
      copy = join(mkdtempSync(join(tmpdir(), 'mme-hf-pre-')), 'preprocess');
      cpSync(join(HF, 'preprocess'), copy, { recursive: true });
      // A tiny BERT-style tokenizer.json in the format the real one (saved by export_onnx.py) has.
      const special = (id: number, content: string) => ({
        id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
      });
      const vocab = { '[PAD]': 0, '[UNK]': 1, '[CLS]': 2, '[SEP]': 3, hello: 4, world: 5, token: 6, '##izer': 7, ',': 8, '!': 9 };
      writeFileSync(
        join(copy, 'tokenizer.json'),
        JSON.stringify({
          version: '1.0',
          truncation: null,
          padding: null,
          added_tokens: [special(0, '[PAD]'), special(1, '[UNK]'), special(2, '[CLS]'), special(3, '[SEP]')],
          normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
          pre_tokenizer: { type: 'BertPreTokenizer' },
          post_processor: {
            type: 'TemplateProcessing',
            single: [
              { SpecialToken: { id: '[CLS]', type_id: 0 } },
              { Sequence: { id: 'A', type_id: 0 } },
              { SpecialToken: { id: '[SEP]', type_id: 0 } },
            ],
            pair: [
              { SpecialToken: { id: '[CLS]', type_id: 0 } },
              { Sequence: { id: 'A', type_id: 0 } },
              { SpecialToken: { id: '[SEP]', type_id: 0 } },
              { Sequence: { id: 'B', type_id: 1 } },
              { SpecialToken: { id: '[SEP]', type_id: 1 } },
            ],
            special_tokens: {
              '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
              '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
            },
          },
          decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
          model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
        }),
      );
    });
    afterAll(() => rmSync(join(copy, '..'), { recursive: true, force: true }));

    itWithPython('tokenizes with tokenizer.json from its model directory, padded to 128', ['numpy', 'tokenizers'], (python) => {
      const long = Array.from({ length: 200 }, () => 'hello').join(' ');
      const [response] = runPythonModel(python, join(copy, '1', 'model.py'), readConfig(HF, 'preprocess'), [
        { INPUT0: text(['Hello, World!', 'tokenizer unknownword', long]) },
      ]);
      const ids = response!.OUTPUT0!;
      const mask = response!.OUTPUT1!;
      expect(ids.datatype).toBe('INT32');
      expect(ids.shape).toEqual([3, 128]);
      expect(mask.shape).toEqual([3, 128]);
      const row = (t: TensorJson, r: number) => (t.data as number[]).slice(r * 128, (r + 1) * 128);
      expect(row(ids, 0)).toEqual([2, 4, 8, 5, 9, 3, ...Array(122).fill(0)]);
      expect(row(mask, 0)).toEqual([...Array(6).fill(1), ...Array(122).fill(0)]);
      expect(row(ids, 1).slice(0, 5)).toEqual([2, 6, 7, 1, 3]);
      expect(row(ids, 2)).toEqual([2, ...Array(126).fill(4), 3]); // truncated to 128, [SEP] kept
      expect(row(mask, 2)).toEqual(Array(128).fill(1));
    });

    itWithPython('refuses to load without tokenizer.json, naming the script that writes it', ['numpy', 'tokenizers'], (python) => {
      const bare = join(mkdtempSync(join(tmpdir(), 'mme-hf-bare-')), 'preprocess');
      try {
        cpSync(join(HF, 'preprocess'), bare, { recursive: true });
        expect(() =>
          runPythonModel(python, join(bare, '1', 'model.py'), readConfig(HF, 'preprocess'), [{ INPUT0: text(['hi']) }]),
        ).toThrow(/tokenizer\.json is missing|tokenizer file .* is missing: run generate_models\.sh/);
      } finally {
        rmSync(join(bare, '..'), { recursive: true, force: true });
      }
    });
  });
});
