// Slow: ~20 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// The validator against public Triton repositories as their authors arrange them (test/real-world/corpus.json):
// every repository Triton loads validates with exit 0, every one Triton rejects exits 1 with Triton's wording at the
// right file:line, and every mistake seeded into them is caught the same way.

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { formatDiagnostic, type Diagnostic } from '../../lib/diagnostics';
import { validateRepository } from '../../lib/repository/validate';
import { AutoCompleteSession, syntaxCheckRunner } from '../../lib/python-auto-complete/run';
import { checkPythonSyntax } from '../../lib/python-auto-complete/syntax-check';
import { DEFAULT_TRITON_VERSION } from '../../lib/catalog/triton-images';
import { tritonPythonVersion } from '../../lib/catalog/triton-releases';
import {
  caseDir,
  CORPUS_DIR,
  Edit,
  Expectation,
  generatedModels,
  loadCorpus,
  materialize,
  onnxPython,
  pythonStandIn,
  removeMaterialized,
  Target,
  targetsOf,
  TritonVerdict,
} from './corpus';
import { pythonWith, testFor } from '../tools';

const corpus = loadCorpus();
const python = onnxPython();
const anyPython = pythonWith([]);
// --run-python starts python once per model, some hundred times: name the interpreter itself, not PATH's python3,
// which is often a shim (pyenv) costing about a second per start.
if (anyPython) process.env.MME_DEPLOY_PYTHON ??= anyPython;
// Without the tool, the rule of test/tools.ts: skipped outside CI with what to install, failing under CI.
const itWithOnnx = testFor({ python: ['onnx', 'numpy'] });
const itWithPython = testFor({ python: [] });
let onnxDir: string | undefined;
// One python for every validation: it forks each model's process for --run-python (numpy imported once, not per
// model), and a process for a repository's model.py syntax check (no python started per repository; files it
// checked once, as a case validated again with --run-python or as an MME archive, are answered without a process).
let session: AutoCompleteSession | undefined;

beforeAll(async () => {
  if (anyPython) session = AutoCompleteSession.open({ python: anyPython });
  if (python) onnxDir = generatedModels(corpus, python);
  if (session) {
    // Every stand-in the cases hold, checked once, in one process the session's python forks, for the Python of the
    // Triton release the validations target: their checks then fork a process only for files they alone hold (a
    // seeded mistake's edit), not one per repository (about 80, each some 60 ms of CPU on a VM where page faults cost).
    // The verdicts are the same python's ast.parse of the same bytes; a file that does not compile is not taken from
    // here (its message names the file, as the validation names it).
    const sources = [...new Set(corpus.cases.flatMap((c) => Object.values(c.standIns ?? {})))];
    const checked = await checkPythonSyntax(
      sources.map((text, i) => ({ name: `stand-in-${i}/model.py`, source: Buffer.from(text) })),
      { pythonVersion: tritonPythonVersion(DEFAULT_TRITON_VERSION), runner: syntaxCheckRunner(session)! },
    );
    if (!checked.ran) throw new Error(`the stand-ins' syntax check did not run: ${checked.reason}`);
  }
});
afterAll(async () => {
  await session?.close();
  removeMaterialized();
});

/** A case as its author arranged it, copied once for its tests (validating reads it; -B: python writes no cache). */
const arranged = new Map<string, string>();
function materialized(c: Parameters<typeof materialize>[0]): string {
  let root = arranged.get(c.id);
  if (root === undefined) arranged.set(c.id, (root = materialize(c, onnxDir)));
  return root;
}

/** What the test expects: the case's own expectation, or Triton's verdict (exit 1 with Triton's message). */
function expectationOf(c: { triton: TritonVerdict; expect?: Expectation }): Expectation {
  if (c.expect) return c.expect;
  if (c.triton.loads) return { exit: 0 };
  return { exit: 1, diagnostics: [{ file: '', wording: c.triton.message! }] };
}

function show(diagnostics: readonly Diagnostic[]): string {
  return diagnostics.map((d) => formatDiagnostic(d, { excerpt: false })).join('\n') || '(no diagnostics)';
}

async function check(root: string, targets: Target[], expected: Expectation, options: { runPython?: boolean } = {}) {
  const all: Diagnostic[] = [];
  let exit: 0 | 1 = 0;
  for (const target of targets) {
    const runPython = options.runPython && session ? { session } : options.runPython;
    const report = await validateRepository(join(root, target.path), {
      mme: target.mme,
      ...(runPython ? { runPython } : {}),
      ...(session ? { pythonSyntax: { session } } : {}),
    });
    if (!report.ok) exit = 1;
    all.push(...report.diagnostics.map((d) => (target.path === '.' ? d : { ...d, file: `${target.path}/${d.file}` })));
  }
  const errors = all.filter((d) => d.severity === 'error');
  if (exit !== expected.exit) {
    throw new Error(`expected exit ${expected.exit}, got ${exit}:\n${show(expected.exit === 0 ? errors : all)}`);
  }
  for (const want of expected.diagnostics ?? []) {
    const found = all.find(
      (d) =>
        (want.wording === undefined || d.message.includes(want.wording)) &&
        (want.code === undefined || d.code === want.code) &&
        (want.file === '' || d.file === want.file) &&
        (want.line === undefined || d.line === want.line) &&
        (expected.exit === 0 || d.severity === 'error'),
    );
    if (!found) {
      throw new Error(`expected a diagnostic ${JSON.stringify(want)}, got:\n${show(all)}`);
    }
  }
}

describe('real-world corpus', () => {
  const pending = (c: { pending?: string }) => c.pending !== undefined;

  describe.each(corpus.cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const expected = expectationOf(c);
    const title = c.triton.loads
      ? `Triton loads it: exit 0`
      : expected.exit === 1
        ? `Triton rejects it: exit 1 with "${(c.triton.message ?? '').slice(0, 60)}..."`
        : `Triton rejects it for a reason the files cannot show: exit 0 (${expected.undecidable})`;
    const needsOnnx = Object.keys({ ...c.onnx, ...c.modelFiles }).length > 0;
    const run = needsOnnx && !python ? itWithOnnx : pending(c as { pending?: string }) ? it.failing : it;
    run(title, async () => {
      await check(materialized(c), targetsOf(c), expected);
    });
    if (c.expectRunPython) {
      const withPython = !anyPython ? itWithPython : pending(c.expectRunPython as { pending?: string }) ? it.failing : it;
      withPython(`with --run-python: exit ${c.expectRunPython.exit}`, async () => {
        await check(materialized(c), targetsOf(c), c.expectRunPython!, { runPython: true });
      });
    } else if (c.triton.loads && Object.keys(c.standIns ?? {}).length > 0) {
      // A model Triton loads must also load under --run-python.
      itWithPython('with --run-python: exit 0', async () => {
        await check(materialized(c), targetsOf(c), { exit: 0 }, { runPython: true });
      });
    }
  });

  it('records no upstream model stumbling on a name our stand-in triton_python_backend_utils lacks', () => {
    // import.js runs each upstream model.py against lib/python-auto-complete's stand-in module; a name Triton's module
    // has and ours lacks would be recorded as the model's own AttributeError (a false finding under --run-python).
    const recorded = JSON.parse(readFileSync(join(__dirname, 'python-models.json'), 'utf8')) as {
      models: Record<string, { autoComplete?: { then?: { raise?: { message?: string } } } }>;
    };
    const stumbled = Object.entries(recorded.models)
      .filter(([, m]) => /'triton_python_backend_utils' has no attribute/.test(m.autoComplete?.then?.raise?.message ?? ''))
      .map(([origin]) => origin);
    expect(stumbled).toEqual([]);
  });

  const mistakes = corpus.mistakes.map((m) => [m.id, m] as const);
  describe.each(mistakes)('seeded mistake %s', (_id, m) => {
    const base = corpus.cases.find((c) => c.id === m.base);
    (pending(m as { pending?: string }) ? it.failing : it)(`${m.what}: exit ${m.expect.exit}`, async () => {
      if (!base) throw new Error(`no case ${m.base}`);
      await check(materialize(base, onnxDir, m.edits as Edit[]), targetsOf({ ...base, mme: m.mme ?? false }), m.expect);
    });
  });
});

describe('the corpus itself', () => {
  // No code: a python model (model.py) is an empty file too, its stand-in written from python-models.json.
  const KEPT = /(\.pbtxt|\.txt|(^|\/)model\.json|(^|\/)expected(_\d+|\.\d+)?)$/;

  function files(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
    );
  }

  it('holds only configs and small text files; every weight and every python model is an empty stand-in', () => {
    const offending = files(join(CORPUS_DIR, 'cases')).filter((f) => {
      const size = statSync(f).size;
      return size > 0 && (!KEPT.test(f) || size > 64 * 1024);
    });
    expect(offending.map((f) => relative(CORPUS_DIR, f))).toEqual([]);
  });

  it('records where every case came from, at which commit, under which licence', () => {
    for (const c of corpus.cases) {
      const source = corpus.sources[c.source];
      expect(source).toBeDefined();
      expect(source!.commit).toMatch(/^[0-9a-f]{40}$/);
      // MIT-0 (aws-samples' usual licence) is MIT without the attribution clause: copying its configs asks even less.
      expect(['Apache-2.0', 'BSD-3-Clause', 'MIT', 'MIT-0']).toContain(source!.licence);
      expect(statSync(caseDir(c)).isDirectory()).toBe(true);
      expect(c.triton.loads ? c.triton.evidence : c.triton.message).toBeTruthy();
    }
  });

  it('has breadth: dozens of repositories, more than a hundred models', () => {
    const repositories = new Set(corpus.cases.map((c) => corpus.sources[c.source]!.repo));
    const models = files(join(CORPUS_DIR, 'cases')).filter((f) => f.endsWith('/config.pbtxt')).length;
    expect(repositories.size).toBeGreaterThanOrEqual(27);
    expect(corpus.cases.length).toBeGreaterThanOrEqual(24);
    expect(models).toBeGreaterThan(100);
  });

  it('names a Triton source line for every rejection', () => {
    for (const c of [...corpus.cases, ...corpus.mistakes]) {
      if (!c.triton.loads) expect(`${c.triton.source ?? ''}`).toMatch(/\.(cc|h|py):\d+/);
    }
  });

  it('places a stand-in, recorded from an upstream file of a listed source, on an empty file in its case', () => {
    const repos = new Set(Object.values(corpus.sources).map((s) => s.repo));
    const placed = Object.entries(corpus.pythonModels.placed);
    expect(placed.length).toBeGreaterThan(50);
    for (const [id, paths] of placed) {
      const c = corpus.cases.find((x) => x.id === id);
      expect(c).toBeDefined();
      for (const [path, key] of Object.entries(paths)) {
        expect(statSync(join(caseDir(c!), path)).size).toBe(0);
        expect(corpus.pythonModels.models[key]).toBeDefined();
        expect(repos).toContain(/^([^@]+)@[0-9a-f]{40}:.+\.py/.exec(key)?.[1]);
        expect(c!.standIns?.[path]).toContain(`#   ${key}\n`);
      }
    }
  });

  itWithOnnx('writes stand-ins that python compiles, with the recorded methods and auto_complete_config', () => {
    // One python process: each stand-in parsed, its class's method names and auto_complete_config's calls listed.
    const check = [
      'import ast, json, sys',
      'out = []',
      'for text in json.load(sys.stdin):',
      '    cls = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == "TritonPythonModel")',
      '    methods = [f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]',
      '    auto = next((f for f in cls.body if getattr(f, "name", "") == "auto_complete_config"), None)',
      '    calls = [c.func for c in ast.walk(auto) if isinstance(c, ast.Call)] if auto else []',
      '    out.append([methods, [c.attr for c in calls if isinstance(c, ast.Attribute)]])',
      'print(json.dumps(out))',
    ].join('\n');
    const specs = Object.entries(corpus.pythonModels.models);
    const texts = specs.map(([key, spec]) => pythonStandIn(key, spec));
    const run = spawnSync(python!, ['-c', check], { input: JSON.stringify(texts), encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const parsed = JSON.parse(run.stdout) as [string[], string[]][];
    parsed.forEach(([methods, calls], i) => {
      const spec = specs[i]![1];
      expect(methods).toEqual(spec.methods.map((m) => /(\w+)\(/.exec(m)![1]));
      expect(calls).toEqual((spec.autoComplete?.calls ?? []).map(([method]) => method));
    });
  });

  it('generates each ONNX model it names', () => {
    for (const c of corpus.cases) for (const key of Object.values(c.onnx ?? {})) expect(corpus.onnxModels[key]).toBeDefined();
    expect(readFileSync(join(CORPUS_DIR, 'make_onnx.py'), 'utf8')).toContain('check_model');
  });

  it('generates each other model file it names, and says where its interface comes from', () => {
    for (const c of corpus.cases) for (const key of Object.values(c.modelFiles ?? {})) expect(corpus.modelFiles[key]).toBeDefined();
    for (const spec of Object.values(corpus.modelFiles)) expect(spec.from).toMatch(/\S/);
  });
});
