#!/usr/bin/env node
// npm run test:mutation [-- --mutate <module> ...] [-- <stryker option> ...]: one Stryker run per module (each entry
// of stryker.config.json's `mutate`, or each --mutate given), then scripts/mutation-floors.js over their reports.
// One run per module because each run writes its report only at its end, and because a run is fastest when it loads
// only what the module needs: the TypeScript checker reads that module's import closure (`tsc` took 21 s for the
// KServe codec's, against 68 s for all modules', on a loaded 2-core machine) and Jest runs only the test files that
// import it, found once (an initial test run of 5 s for write-file.ts against 82 s for the whole mutation suite).
// Each module keeps its own incremental file (reports/mutation/incremental/), so a second run tests only the mutants
// whose code or covering tests changed; pass --force to test them all again. --tests <file,...> runs those test files
// instead of all that import the module (say why in the run's notes: a slow end-to-end file that covers nothing the
// module's own tests leave out).
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { loadavg } = require('node:os');
const { dirname, join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const REPORTS = join('reports', 'mutation');
// The checker's tsconfig must lie inside the project (Stryker copies the project to a sandbox and reads it there);
// it is written for each run and removed after (.gitignore lists it).
const RUN_TSCONFIG = 'tsconfig.mutation-run.json';

const base = JSON.parse(readFileSync(join(ROOT, 'stryker.config.json'), 'utf8'));
const modules = [];
const passThrough = [];
/** Test files given with --tests, in place of those found for each module. */
let chosenTests;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--mutate' || args[i] === '-m') {
    if (args[i + 1] === undefined) usage('--mutate needs a module path (a file or a glob of stryker.config.json)');
    modules.push(...args[++i].split(','));
  } else if (args[i] === '--tests') {
    if (args[i + 1] === undefined) usage('--tests needs test files, separated by commas');
    chosenTests = args[++i].split(',').filter(Boolean);
    const missing = chosenTests.find((file) => !existsSync(join(ROOT, file)));
    if (missing !== undefined) usage(`--tests: no file ${missing}`);
  } else if (args[i].startsWith('--mutate=')) {
    modules.push(...args[i].slice('--mutate='.length).split(','));
  } else {
    passThrough.push(args[i]);
  }
}
if (modules.length === 0) modules.push(...base.mutate);

/** The file name a module's reports carry: `lib/push/*.ts` becomes `lib-push-all.ts`. */
function slug(module) {
  return module.replace(/\*/g, 'all').replace(/[/\\:]/g, '-');
}

function usage(message) {
  const options = '[--mutate <module>]... [--tests <file,...>] [stryker options]';
  console.error(`mme-deploy mutation: ${message}. Usage: npm run test:mutation -- ${options}`);
  process.exit(2);
}

// The package's `exports` hide its bin/ from require.resolve; its package.json is the way in.
const STRYKER = join(dirname(require.resolve('@stryker-mutator/core/package.json')), 'bin', 'stryker.js');
mkdirSync(join(ROOT, REPORTS, 'config'), { recursive: true });
mkdirSync(join(ROOT, REPORTS, 'modules'), { recursive: true });
/** The test files of the mutation suite that import `module` (Jest's --findRelatedTests, asked once). */
function relatedTests(module) {
  const file = module.replace(/:\d+(:\d+)?-\d+(:\d+)?$/, '');
  const jest = join(dirname(require.resolve('jest/package.json')), 'bin', 'jest.js');
  const files = globFiles(file);
  // Jest finds the tests of a file only when that file lies under one of its roots.
  const roots = ['test', ...new Set(files.map((path) => dirname(path)))].flatMap((root) => ['--roots', root]);
  const list = spawnSync(
    process.execPath,
    [jest, '--config', 'jest.mutation.config.js', ...roots, '--listTests', '--findRelatedTests', ...files],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, MME_MUTATION_TESTS: '' } },
  );
  if (list.status !== 0) usage(`jest --listTests failed: ${list.stderr.trim()}`);
  return list.stdout.split('\n').filter(Boolean).map((path) => relative(ROOT, path)).sort();
}

/** The files a `mutate` pattern names (`*` within one folder level, as in stryker.config.json). */
function globFiles(pattern) {
  const parts = pattern.split('/');
  let paths = [''];
  for (const part of parts) {
    if (!part.includes('*')) {
      paths = paths.map((path) => join(path, part));
      continue;
    }
    const matcher = new RegExp(`^${part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    paths = paths.flatMap((path) => readdirSync(join(ROOT, path)).filter((name) => matcher.test(name)).map((name) => join(path, name)));
  }
  return paths.filter((path) => existsSync(join(ROOT, path)));
}

const reports = [];
for (const module of modules) {
  const name = slug(module);
  const config = {
    ...base,
    mutate: [module],
    tsconfigFile: RUN_TSCONFIG,
    jsonReporter: { fileName: join(REPORTS, 'modules', `${name}.json`) },
    incremental: true,
    incrementalFile: join(REPORTS, 'incremental', `${name}.json`),
    // The tests are chosen once, below, not by Jest for each mutant.
    jest: { ...base.jest, enableFindRelatedTests: false },
  };
  delete config.$schema;
  const configFile = join(REPORTS, 'config', `${name}.json`);
  writeFileSync(join(ROOT, configFile), `${JSON.stringify(config, null, 2)}\n`);
  // A range (`file:10-20`) mutates part of the file, but the checker needs the whole file.
  const file = module.replace(/:\d+(:\d+)?-\d+(:\d+)?$/, '');
  const tsconfig = { extends: './tsconfig.json', compilerOptions: { types: ['node'] }, include: [file] };
  writeFileSync(join(ROOT, RUN_TSCONFIG), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const tests = chosenTests ?? relatedTests(module);
  if (tests.length === 0) usage(`no test in jest.mutation.config.js imports ${module}`);
  const load = loadavg()[0];
  const started = Date.now();
  console.log(`mme-deploy mutation: ${module} (load ${load.toFixed(2)})`);
  const env = { ...process.env, MME_MUTATION_TESTS: JSON.stringify(tests) };
  const run = spawnSync(process.execPath, [STRYKER, 'run', configFile, ...passThrough], { cwd: ROOT, stdio: 'inherit', env });
  rmSync(join(ROOT, RUN_TSCONFIG), { force: true });
  const seconds = Math.round((Date.now() - started) / 1000);
  const timing = { module, seconds, loadAtStart: Number(load.toFixed(2)), loadAtEnd: Number(loadavg()[0].toFixed(2)) };
  writeFileSync(join(ROOT, REPORTS, 'modules', `${name}.run.json`), `${JSON.stringify(timing)}\n`);
  if (run.status !== 0) {
    console.error(`mme-deploy mutation: Stryker failed on ${module} (exit ${run.status ?? run.signal}); see its output above.`);
    process.exit(run.status || 1);
  }
  reports.push(join(REPORTS, 'modules', `${name}.json`));
}
const floors = spawnSync(process.execPath, [join(__dirname, 'mutation-floors.js'), ...reports], { cwd: ROOT, stdio: 'inherit' });
process.exitCode = floors.status ?? 1;
