// Slow: ~6 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// The complete example, examples/sentiment_onnx: every artifact is in the repository, real in its format, and
// agrees with the configs, with build_model.py's documented expected outputs and with the request it ships.

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelConfig } from '../../lib/config/model-config-schema';
import { validateRepository } from '../../lib/repository/validate';
import { EXAMPLES_DIR, readConfig } from './example-repositories';
import { ONNX_ELEM_TYPES, readOnnxModel } from './onnx-model-proto';
import { itWithTools, pythonWith } from '../tools';

const REPO = join(EXAMPLES_DIR, 'sentiment_onnx');
const MODELS = ['classifier', 'ensemble', 'postprocess', 'preprocess'];
const ONNX_PATH = join(REPO, 'classifier', '1', 'model.onnx');

interface ExpectedOutputs {
  max_tokens: number;
  labels: string[];
  examples: { text: string; input_ids: number[]; logits: number[]; probabilities: number[]; label: string }[];
}
const expected = JSON.parse(readFileSync(join(REPO, 'expected_outputs.json'), 'utf8')) as ExpectedOutputs;
const configs = Object.fromEntries(MODELS.map((m) => [m, readConfig(REPO, m)])) as Record<string, ModelConfig>;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe('sentiment_onnx repository', () => {
  it.each([
    ['as a Triton repository', {}],
    ['as an MME archive', { mme: true }],
  ])('validates clean %s', async (_mode, options) => {
    const report = await validateRepository(REPO, options);
    const problems = report.diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
    expect(problems.map((d) => `${d.severity} ${d.code} ${d.file}: ${d.message}`).join('\n')).toBe('');
    expect(report.ok).toBe(true);
    expect(report.models.map((m) => m.name).sort()).toEqual(MODELS);
  });

  it('is smaller than 2 MB in all', () => {
    const total = filesUnder(REPO).reduce((sum, f) => sum + statSync(f).size, 0);
    expect(total).toBeLessThan(2 * 1024 * 1024);
  });

  it('has every file its configs and model.py files need', () => {
    const needed = [
      'ensemble/1', // the ensemble's version directory, kept in git by a README
      'preprocess/1/model.py',
      'preprocess/vocab.txt',
      'classifier/1/model.onnx',
      'postprocess/1/model.py',
      'postprocess/labels.txt',
    ];
    for (const path of needed) expect(existsSync(join(REPO, path))).toBe(true);
    expect(readFileSync(join(REPO, 'preprocess/1/model.py'), 'utf8')).toContain('"vocab.txt"');
    expect(readFileSync(join(REPO, 'postprocess/1/model.py'), 'utf8')).toContain('"labels.txt"');
  });

  it('batches everywhere, with one batch size the ensemble can pass to every step', () => {
    for (const model of MODELS) expect(configs[model]!.max_batch_size).toBe(configs.ensemble!.max_batch_size);
    expect(configs.ensemble!.max_batch_size).toBeGreaterThan(0);
  });

  it('ships a vocabulary whose first ids are padding and unknown, and one label per probability', () => {
    const vocab = readFileSync(join(REPO, 'preprocess', 'vocab.txt'), 'utf8').split('\n').filter(Boolean);
    expect(vocab.slice(0, 2)).toEqual(['[PAD]', '[UNK]']);
    expect(new Set(vocab).size).toBe(vocab.length);
    const labels = readFileSync(join(REPO, 'postprocess', 'labels.txt'), 'utf8').split('\n').filter(Boolean);
    expect(labels).toEqual(expected.labels);
    const probabilities = configs.postprocess!.output!.find((o) => o.name === 'probabilities')!;
    expect(probabilities.dims).toEqual([BigInt(labels.length)]);
    // preprocess pads to the classifier's input length, the length build_model.py trained with
    expect(configs.preprocess!.output![0]!.dims).toEqual([BigInt(expected.max_tokens)]);
  });
});

describe('sentiment_onnx classifier/1/model.onnx', () => {
  const model = readOnnxModel(readFileSync(ONNX_PATH));

  it('is an ONNX model of the default operator set, opset 13, with an IR version onnxruntime reads', () => {
    expect(model.opsets).toEqual([{ domain: '', version: 13 }]);
    expect(model.irVersion).toBeGreaterThanOrEqual(3);
    expect(model.irVersion).toBeLessThanOrEqual(10);
    expect(model.producerName).toBe('pytorch');
    expect(model.graph.nodes.length).toBeGreaterThan(0);
    for (const node of model.graph.nodes) expect(node.domain).toBe('');
  });

  it('has exactly the inputs and outputs classifier/config.pbtxt declares, batch dimension first', () => {
    const config = configs.classifier!;
    const initializers = new Set(model.graph.initializers);
    const inputs = model.graph.inputs.filter((i) => !initializers.has(i.name));
    const asConfig = (values: typeof inputs) =>
      values.map((v) => ({ name: v.name, elemType: v.elemType, batch: typeof v.dims[0], dims: v.dims.slice(1) }));
    const declared = (tensors: NonNullable<ModelConfig['input']>) =>
      tensors.map((t) => ({
        name: t.name,
        elemType: ONNX_ELEM_TYPES[t.data_type!],
        batch: 'string', // a symbolic (dynamic) batch dimension, since max_batch_size > 0
        dims: t.dims!.map(Number),
      }));
    expect(asConfig(inputs)).toEqual(declared(config.input!));
    expect(asConfig(model.graph.outputs)).toEqual(declared(config.output!));
  });

  it('is refused when truncated, so the check above can tell a broken file', () => {
    const bytes = readFileSync(ONNX_PATH);
    expect(() => readOnnxModel(bytes.subarray(0, Math.floor(bytes.length / 2)))).toThrow();
  });

  /**
   * onnx.checker.check_model (full check) on the committed model and on a copy cut short, in one python: importing onnx
   * costs about a second of CPU. Each file's verdict: null when it passes, else the exception's words.
   */
  let verdicts: { stderr: string; status: number | null; committed?: string | null; truncated?: string | null } | undefined;
  function checkerVerdicts(python: string) {
    if (verdicts) return verdicts;
    const dir = mkdtempSync(join(tmpdir(), 'mme-onnx-'));
    try {
      const broken = join(dir, 'model.onnx');
      copyFileSync(ONNX_PATH, broken);
      const bytes = readFileSync(broken);
      writeFileSync(broken, bytes.subarray(0, bytes.length - 100));
      const script = [
        'import json, sys, onnx',
        'out = []',
        'for path in sys.argv[1:]:',
        '    try:',
        '        onnx.checker.check_model(onnx.load(path), full_check=True)',
        '        out.append(None)',
        '    except Exception as e:',
        '        out.append("%s: %s" % (type(e).__name__, e))',
        'print(json.dumps(out))',
      ].join('\n');
      const run = spawnSync(python, ['-c', script, ONNX_PATH, broken], { encoding: 'utf8' });
      const [committed, truncated] = run.status === 0 ? (JSON.parse(run.stdout) as (string | null)[]) : [];
      return (verdicts = { stderr: run.stderr, status: run.status, committed, truncated });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  itWithTools('passes onnx.checker.check_model (full check)', { python: ['onnx'] }, (onnx) => {
    const run = checkerVerdicts(onnx.python!);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.committed).toBeNull();
  });

  itWithTools('is rejected by onnx.checker when corrupted (the check is not a formality)', { python: ['onnx'] }, (onnx) => {
    const run = checkerVerdicts(onnx.python!);
    expect(run.status).toBe(0);
    expect(run.truncated).toEqual(expect.stringMatching(/\S/));
  });
});

/**
 * The torch.__version__ that `python` would report, read from torch/version.py without importing torch (which costs
 * seconds of CPU; build_model.py imports it when the versions agree): torch.__version__ is that string, wrapped
 * (pytorch/pytorch@v1.13.0:torch/__init__.py:28 takes it from torch/torch_version.py:2, `from .version import
 * __version__`). Undefined when it cannot be read.
 */
function torchVersion(python: string): string | undefined {
  const script = [
    'import importlib.util, os',
    'spec = importlib.util.find_spec("torch")',
    'scope = {}',
    'exec(open(os.path.join(os.path.dirname(spec.origin), "version.py")).read(), scope)',
    'print(scope["__version__"])',
  ].join('\n');
  const run = spawnSync(python, ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

describe('sentiment_onnx build_model.py', () => {
  const built = JSON.parse(readFileSync(join(REPO, 'expected_outputs.json'), 'utf8')) as { torch_version: string };
  // The run's inventory names the python that has torch, onnx and numpy (test/tools.ts); its torch version is read
  // without importing torch.
  const torch = pythonWith(['torch', 'onnx', 'numpy']);
  const version = torch === undefined ? undefined : torchVersion(torch);
  const name = 'rebuilds every committed artifact byte for byte';
  if (torch === undefined || version === undefined) {
    const why = torch === undefined ? 'no python3 here has torch, onnx and numpy' : `torch/version.py of ${torch} is unreadable`;
    it.skip(`${name} — skipped: ${why} (set MME_DEPLOY_TEST_PYTHON)`, () => undefined);
  } else if (version !== built.torch_version) {
    // Other torch versions train to slightly different weights; the committed files name the one that built them.
    it.skip(`${name} — skipped: torch ${version} here, the committed files were built by ${built.torch_version}`, () =>
      undefined,
    );
  } else {
    it(name, () => {
      const out = mkdtempSync(join(tmpdir(), 'mme-sentiment-build-'));
      try {
        const run = spawnSync(torch, [join(REPO, 'build_model.py'), '--out', out], {
          encoding: 'utf8',
          env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
          timeout: 120_000,
        });
        expect(run.stderr).toBe('');
        expect(run.status).toBe(0);
        const artifacts = [
          'classifier/1/model.onnx',
          'preprocess/vocab.txt',
          'postprocess/labels.txt',
          'expected_outputs.json',
          'request.json',
        ];
        for (const file of artifacts) {
          expect({ file, same: readFileSync(join(out, file)).equals(readFileSync(join(REPO, file))) }).toEqual({
            file,
            same: true,
          });
        }
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  }
});

describe('sentiment_onnx request and expected outputs', () => {
  const request = JSON.parse(readFileSync(join(REPO, 'request.json'), 'utf8')) as {
    inputs: { name: string; shape: number[]; datatype: string; data: string[] }[];
    outputs?: { name: string }[];
  };

  it('request.json is a KServe v2 request for the ensemble’s inputs, batch first', () => {
    const ensemble = configs.ensemble!;
    expect(request.inputs.map((i) => i.name)).toEqual(ensemble.input!.map((i) => i.name));
    const [text] = request.inputs;
    expect(text!.datatype).toBe('BYTES'); // TYPE_STRING on the wire
    expect(text!.shape).toEqual([text!.data.length, ...ensemble.input![0]!.dims!.map(Number)]);
    expect(text!.data.length).toBeLessThanOrEqual(ensemble.max_batch_size!);
    expect(request.outputs?.map((o) => o.name)).toEqual(ensemble.output!.map((o) => o.name));
  });

  it('expected_outputs.json answers exactly the sentences request.json sends', () => {
    expect(expected.examples.map((e) => e.text)).toEqual(request.inputs[0]!.data);
    for (const example of expected.examples) {
      expect(example.input_ids).toHaveLength(expected.max_tokens);
      expect(example.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
      expect(example.label).toBe(expected.labels[example.probabilities.indexOf(Math.max(...example.probabilities))]);
    }
  });

  it('the README documents the expected outputs build_model.py computed', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    for (const example of expected.examples) {
      const row = [
        example.text,
        example.input_ids.filter((id) => id !== 0).join(' '),
        ...example.probabilities.map((p) => p.toFixed(4)),
        example.label,
      ].join(' | ');
      expect(readme).toContain(`| ${row} |`);
    }
    expect(readme).toContain('npx mme-deploy package examples/sentiment_onnx');
  });
});
