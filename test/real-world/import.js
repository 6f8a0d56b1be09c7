#!/usr/bin/env node
// Maintainer tool, not run by the tests: (re)builds test/real-world/cases/ from local git mirrors of the public
// repositories named in corpus.json, following each case's `steps`. It copies only configs and small text files and
// writes an EMPTY stand-in for every weight file, so nothing but test data from those repositories is committed.
// Python models are code, not data: each upstream model.py is recorded by record_python_model.py (its imports, its
// model class's methods, what its auto_complete_config declares) into python-models.json and left EMPTY in the case;
// corpus.ts writes a stand-in of ours from the record when a test materializes the case. Before it is kept, each
// record is checked: the stand-in, recorded the same way, must import, declare and fail exactly as the upstream file.
//
//   MIRROR=<dir of clones> node test/real-world/import.js [case-id ...]
//
// Recording imports each model.py (with mme-deploy's stand-in triton_python_backend_utils) in the python that
// `validate --run-python` uses: MME_DEPLOY_PYTHON, else python3. Which of its imports are installed there shows in
// the record only where a module-level statement other than an import fails, and as `withEmptyModules`.
//
// A mirror of `owner/name` is the git directory `$MIRROR/owner+name/repo` (any clone works: point MIRROR at a folder
// of `owner+name/repo` clones). Steps:
//   ["tree", from, to]     every file under `from` (at the source's commit): text files kept, others as empty stand-ins
//   ["file", from, to]     one text file
//   ["empty", to]          an empty stand-in for a file the authors' README or script downloads or exports
//   ["dir", to]            an empty directory (kept in git with a .gitkeep)
//   ["text", to, content]  a file the authors' instructions write (e.g. a template filled by their script)
//   ["append", to, text]   append to a copied file (what the authors' script does with echo >>)
//   ["sub", to, from, to]  replace text in a copied file (what the authors' script does with sed)
//   ["template", to, {k: v}]  fill ${k} as the authors' tools/fill_template.py does
//   ["nbcell", notebook, path, to]  the text of the notebook's `%%writefile <path>` cell
//   ["nbfstring", notebook, cell, to, {k: v}]  the f"""...""" string code cell `cell` (its index) writes, each {k} filled
//                          with the value the notebook's earlier cells give it
'use strict';
const { execFileSync } = require('node:child_process');
const { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join, posix } = require('node:path');
const tsx = require('tsx/cjs/api');

const HERE = __dirname;
const MIRROR = process.env.MIRROR;
if (!MIRROR) {
  process.stderr.write('import.js: set MIRROR to a directory of clones, $MIRROR/owner+name/repo each (see the top of this file)\n');
  process.exit(2);
}
const corpus = JSON.parse(readFileSync(join(HERE, 'corpus.json'), 'utf8'));

/**
 * Kept as text: configs, label files, vLLM's model.json and the QA suites' `expected` messages. model.py (the python
 * backend's entry point) is recorded (PYTHON_MODEL). Everything else (weights, helper modules, pipelines, archives)
 * becomes an empty stand-in.
 */
const TEXT = /(\.pbtxt|\.txt|(^|\/)model\.json|(^|\/)expected(_\d+|\.\d+)?|\.gitkeep)$/;
const PYTHON_MODEL = /(^|\/)model\.py$/;
const MAX_TEXT_BYTES = 64 * 1024;
const PYTHON_MODELS = join(HERE, 'python-models.json');

function git(repo, args, encoding = 'utf8') {
  const dir = join(MIRROR, repo.replace('/', '+'), 'repo');
  return execFileSync('git', ['-C', dir, ...args], { encoding, maxBuffer: 1 << 26 });
}

/**
 * Arranges case `c`. Every python file written with content (a python model: the upstream code) is added to `python`
 * with where it came from, to be recorded and emptied.
 */
function build(c, python) {
  const source = corpus.sources[c.source];
  const root = join(HERE, 'cases', c.id);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const commit = c.commit ?? source.commit;
  const write = (to, content, origin) => {
    const path = join(root, to);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    if (to.endsWith('.py') && content.length > 0) python.push({ case: c.id, to, file: path, origin });
  };
  const upstream = (path) => `${source.repo}@${commit}:${path}`;
  for (const [op, a, b, d, e] of c.steps) {
    if (op === 'tree') {
      const list = git(source.repo, ['ls-tree', '-r', '-l', commit, '--', a]).trim().split('\n').filter(Boolean);
      for (const line of list) {
        const [meta, path] = line.split('\t');
        const size = Number(meta.split(/\s+/)[3]);
        const to = posix.join(b, posix.relative(a, path));
        const kept = PYTHON_MODEL.test(path) || (TEXT.test(path) && size <= MAX_TEXT_BYTES);
        write(to, kept ? git(source.repo, ['show', `${commit}:${path}`], 'buffer') : '', upstream(path.trim()));
      }
    } else if (op === 'file') {
      if (!TEXT.test(b) && !b.endsWith('.py')) throw new Error(`${c.id}: ${b} is not a kind of file the corpus keeps`);
      write(b, git(source.repo, ['show', `${commit}:${a}`], 'buffer'), upstream(a));
    } else if (op === 'empty') {
      write(a, '');
    } else if (op === 'dir') {
      write(posix.join(a, '.gitkeep'), '');
    } else if (op === 'text') {
      write(a, b);
    } else if (op === 'template') {
      // tools/fill_template.py style: ${name} replaced where a value is given, left as is otherwise
      const path = join(root, a);
      writeFileSync(path, readFileSync(path, 'utf8').replace(/\$\{(\w+)\}/g, (m, name) => (name in b ? b[name] : m)));
    } else if (op === 'nbcell') {
      // a notebook's `%%writefile <b>` cell
      const nb = JSON.parse(git(source.repo, ['show', `${commit}:${a}`]));
      const cell = nb.cells.find((c) => c.cell_type === 'code' && [].concat(c.source).join('').startsWith(`%%writefile ${b}\n`));
      if (!cell) throw new Error(`${c.id}: no %%writefile ${b} cell in ${a}`);
      write(
        d,
        [].concat(cell.source).join('').slice(`%%writefile ${b}\n`.length).replace(/\n?$/, '\n'),
        `${upstream(a)} (%%writefile ${b})`,
      );
    } else if (op === 'nbfstring') {
      // the one f"""...""" literal of code cell `b`, as python formats it: {{ and }} are braces, {name} a value
      const nb = JSON.parse(git(source.repo, ['show', `${commit}:${a}`]));
      const cell = nb.cells[b];
      const literals = cell?.cell_type === 'code' ? [...[].concat(cell.source).join('').matchAll(/\bf"""([^]*?)"""/g)] : [];
      if (literals.length !== 1) throw new Error(`${c.id}: cell ${b} of ${a} holds ${literals.length} f"""...""" strings, not one`);
      const text = literals[0][1].replace(/\{\{|\}\}|\{([^{}]*)\}/g, (m, name) => {
        if (name === undefined) return m[0];
        if (!(name in e)) throw new Error(`${c.id}: no value for {${name}} in cell ${b} of ${a}`);
        return e[name];
      });
      write(d, text, `${upstream(a)} (cell ${b})`);
    } else if (op === 'append') {
      writeFileSync(join(root, a), readFileSync(join(root, a), 'utf8') + b);
    } else if (op === 'sub') {
      const path = join(root, a);
      const text = readFileSync(path, 'utf8');
      if (!text.includes(b)) throw new Error(`${c.id}: '${b}' not found in ${a}`);
      writeFileSync(path, text.split(b).join(d));
    } else {
      throw new Error(`${c.id}: unknown step ${op}`);
    }
  }
}

/** Runs record_python_model.py over the files; returns its records, or throws with every file it could not record. */
function record(stubDir, files) {
  const python = process.env.MME_DEPLOY_PYTHON ?? 'python3';
  const input = JSON.stringify(files.map((file) => ({ file })));
  const records = JSON.parse(
    execFileSync(python, ['-B', join(HERE, 'record_python_model.py'), stubDir], { input, encoding: 'utf8', maxBuffer: 1 << 26 }),
  );
  const failed = records.filter((r) => r.error);
  if (failed.length > 0) throw new Error(`could not record:\n${failed.map((r) => `  ${r.error}`).join('\n')}`);
  return records;
}

/** What the validator reads of a model.py as text (lib/repository/model-rules/python.ts, io-completion.ts). */
function textFacts(pythonSourceFacts, text) {
  const { definition, autoComplete } = pythonSourceFacts(text);
  return JSON.stringify({ definition, autoComplete, execute: /\bexecute\b/.test(text) });
}

/**
 * Records the python models `jobs` names, checks that each stand-in behaves as the upstream file, updates
 * python-models.json for the cases in `built`, and empties every recorded file (also when something fails).
 */
function recordPythonModels(jobs, built) {
  const dir = mkdtempSync(join(tmpdir(), 'mme-corpus-record-'));
  try {
    const { STAND_IN_UTILS } = tsx.require('../../lib/python-auto-complete/stand-in.ts', __filename);
    const { pythonSourceFacts } = tsx.require('../../lib/repository/io-completion.ts', __filename);
    const { pythonStandIn } = tsx.require('./corpus.ts', __filename);
    writeFileSync(join(dir, 'triton_python_backend_utils.py'), STAND_IN_UTILS);
    const upstream = jobs.length > 0 ? record(dir, jobs.map((j) => j.file)) : [];
    const facts = jobs.map((j) => textFacts(pythonSourceFacts, readFileSync(j.file, 'utf8')));
    const models = {};
    for (const [i, job] of jobs.entries()) {
      const spec = upstream[i].spec;
      if (models[job.origin] && JSON.stringify(models[job.origin]) !== JSON.stringify(spec)) {
        throw new Error(`${job.origin} records differently in ${job.case}/${job.to} than elsewhere`);
      }
      models[job.origin] = spec;
      writeFileSync(job.file, pythonStandIn(job.origin, spec));
    }
    const standIns = jobs.length > 0 ? record(dir, jobs.map((j) => j.file)) : [];
    const comparable = (r) => {
      const auto = r.spec.autoComplete && { ...r.spec.autoComplete, readsConfig: undefined };
      return JSON.stringify({ behaviour: r.behaviour, spec: { ...r.spec, autoComplete: auto } });
    };
    for (const [i, job] of jobs.entries()) {
      const where = `${job.case}/${job.to} (${job.origin})`;
      if (comparable(standIns[i]) !== comparable(upstream[i])) {
        throw new Error(
          `the stand-in for ${where} does not behave as the upstream file:\n` +
            `  upstream ${comparable(upstream[i])}\n  stand-in ${comparable(standIns[i])}`,
        );
      }
      const standInFacts = textFacts(pythonSourceFacts, readFileSync(job.file, 'utf8'));
      if (standInFacts !== facts[i]) {
        throw new Error(`the stand-in for ${where} reads differently as text: ${standInFacts}, upstream ${facts[i]}`);
      }
    }
    let previous = { models: {}, placed: {} };
    try {
      previous = JSON.parse(readFileSync(PYTHON_MODELS, 'utf8'));
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    const placed = Object.fromEntries(Object.entries(previous.placed).filter(([id]) => !built.has(id)));
    for (const job of jobs) (placed[job.case] ??= {})[job.to] = job.origin;
    const used = new Set(Object.values(placed).flatMap((p) => Object.values(p)));
    const all = { ...previous.models, ...models };
    const sorted = (o) => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
    writeFileSync(PYTHON_MODELS, `${JSON.stringify({
      about:
        "Written by import.js from record_python_model.py: what the corpus's python models are, " +
        'for the stand-ins corpus.ts writes in their place. Do not edit: rerun import.js.',
      models: sorted(Object.fromEntries(Object.entries(all).filter(([key]) => used.has(key)))),
      placed: sorted(Object.fromEntries(Object.entries(placed).map(([id, p]) => [id, sorted(p)]))),
    }, null, 1)}\n`);
  } finally {
    for (const job of jobs) writeFileSync(job.file, '');
    rmSync(dir, { recursive: true, force: true });
  }
}

const only = new Set(process.argv.slice(2));
const python = [];
const built = new Set();
try {
  for (const c of corpus.cases) {
    if (only.size > 0 && !only.has(c.id)) continue;
    built.add(c.id);
    build(c, python);
  }
} catch (err) {
  for (const job of python) writeFileSync(job.file, '');
  throw err;
}
recordPythonModels(python, built);
