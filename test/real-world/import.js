#!/usr/bin/env node
// Maintainer tool, not run by the tests: (re)builds test/real-world/cases/ from local git mirrors of the public
// repositories named in corpus.json, following each case's `steps`. It copies only configs and small text files and
// writes an EMPTY stand-in for every weight file, so nothing but test data from those repositories is committed.
//
//   MIRROR=/work/.mirror node test/real-world/import.js [case-id ...]
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
'use strict';
const { execFileSync } = require('node:child_process');
const { mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { dirname, join, posix } = require('node:path');

const HERE = __dirname;
const MIRROR = process.env.MIRROR ?? '/work/.mirror';
const corpus = JSON.parse(readFileSync(join(HERE, 'corpus.json'), 'utf8'));

/**
 * Kept as text: configs, label files, model.py (the python backend's entry point), vLLM's model.json and the QA
 * suites' `expected` messages. Everything else (weights, helper modules, pipelines, archives) becomes an empty stand-in.
 */
const TEXT = /(\.pbtxt|\.txt|(^|\/)model\.py|(^|\/)model\.json|(^|\/)expected(_\d+|\.\d+)?|\.gitkeep)$/;
const MAX_TEXT_BYTES = 64 * 1024;

function git(repo, args, encoding = 'utf8') {
  const dir = join(MIRROR, repo.replace('/', '+'), 'repo');
  return execFileSync('git', ['-C', dir, ...args], { encoding, maxBuffer: 1 << 26 });
}

function build(c) {
  const source = corpus.sources[c.source];
  const root = join(HERE, 'cases', c.id);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const commit = c.commit ?? source.commit;
  const write = (to, content) => {
    const path = join(root, to);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  };
  for (const [op, a, b, d] of c.steps) {
    if (op === 'tree') {
      const list = git(source.repo, ['ls-tree', '-r', '-l', commit, '--', a]).trim().split('\n').filter(Boolean);
      for (const line of list) {
        const [meta, path] = line.split('\t');
        const size = Number(meta.split(/\s+/)[3]);
        const to = posix.join(b, posix.relative(a, path));
        if (TEXT.test(path) && size <= MAX_TEXT_BYTES) write(to, git(source.repo, ['show', `${commit}:${path}`], 'buffer'));
        else write(to, '');
      }
    } else if (op === 'file') {
      if (!TEXT.test(b) && !b.endsWith('.py')) throw new Error(`${c.id}: ${b} is not a kind of file the corpus keeps`);
      write(b, git(source.repo, ['show', `${commit}:${a}`], 'buffer'));
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
      write(d, [].concat(cell.source).join('').slice(`%%writefile ${b}\n`.length).replace(/\n?$/, '\n'));
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

const only = new Set(process.argv.slice(2));
for (const c of corpus.cases) if (only.size === 0 || only.has(c.id)) build(c);
