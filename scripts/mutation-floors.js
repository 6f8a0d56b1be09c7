#!/usr/bin/env node
// After `npm run test:mutation` (scripts/mutation.js): the mutation score of each module in the reports, and the floor
// it must keep.
// Score = detected / (detected + undetected): killed and timed-out mutants over those plus survived and uncovered
// ones, as Stryker counts it; mutants that do not compile or run (errors) and ignored ones are left out.
'use strict';

const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

// The floor of each module, in percent: the score measured when the module's tests were last strengthened, rounded
// down to a multiple of 5, so that a weaker test or new untested code fails the run (docs/testing.md says why).
const FLOORS = {
  'constructs/handlers/archive-copy/index.js': 95,
  'constructs/handlers/archive-retention/index.js': 95,
  'constructs/handlers/scaling-guard/index.js': 90,
  'lib/archive/tar-reader.ts': 95,
  'lib/archive/write-file.ts': 95,
  'lib/cli/signals.ts': 90,
  'lib/kserve/kserve-codec.ts': 85,
  'lib/push/push-source.ts': 85,
  'lib/push/push-target-model.ts': 90,
  'lib/repository/mme-rules.ts': 95,
};
const DEFAULT_FLOOR = 60;

const REPORTS = join('reports', 'mutation', 'modules');
// The reports to read: those named, or every module's latest one (scripts/mutation.js writes one per module).
let files = process.argv.slice(2);
if (files.length === 0) {
  files = existsSync(REPORTS)
    ? readdirSync(REPORTS)
        .filter((name) => name.endsWith('.json') && !name.endsWith('.run.json'))
        .map((name) => join(REPORTS, name))
    : [];
  if (existsSync(join('reports', 'mutation', 'mutation.json'))) files.push(join('reports', 'mutation', 'mutation.json'));
}
if (files.length === 0) {
  console.error('mme-deploy mutation floors: no mutation report in reports/mutation; run `npm run test:mutation` first.');
  process.exit(2);
}

// A module measured in parts (`--mutate lib/x.ts:10-80`, one report per range) is scored over the union of its
// reports' mutants; where reports overlap, the newest report's result for a mutant wins.
const modules = new Map();
const byAge = files.map((file) => ({ file, mtime: statSync(file).mtimeMs })).sort((a, b) => a.mtime - b.mtime);
for (const { file: reportFile } of byAge) {
  const report = JSON.parse(readFileSync(reportFile, 'utf8'));
  let timing;
  try {
    timing = JSON.parse(readFileSync(reportFile.replace(/\.json$/, '.run.json'), 'utf8'));
  } catch {
    timing = undefined;
  }
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const path = relative(process.cwd(), file) || file;
    const entry = modules.get(path) ?? { mutants: new Map(), timings: [] };
    for (const mutant of mutants) entry.mutants.set(mutantKey(mutant), mutant);
    if (timing) entry.timings.push(timing);
    modules.set(path, entry);
  }
}

/** A mutant's identity across runs: its place and its change (Stryker's ids are numbered per run). */
function mutantKey({ location: { start, end }, mutatorName, replacement }) {
  return `${start.line}:${start.column}-${end.line}:${end.column} ${mutatorName} ${replacement}`;
}

const rows = [];
let failed = false;
for (const [path, entry] of [...modules].sort(([a], [b]) => a.localeCompare(b))) {
  const mutants = [...entry.mutants.values()];
  const count = (...statuses) => mutants.filter((mutant) => statuses.includes(mutant.status)).length;
  const detected = count('Killed', 'Timeout');
  const undetected = count('Survived', 'NoCoverage');
  const score = detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected);
  const floor = FLOORS[path] ?? DEFAULT_FLOOR;
  const ok = score >= floor;
  failed ||= !ok;
  const cells = [mutants.length, count('Killed'), count('Timeout'), count('Survived'), count('NoCoverage')];
  cells.push(count('CompileError', 'RuntimeError'), count('Ignored'));
  const { timings } = entry;
  const seconds = timings.reduce((sum, timing) => sum + timing.seconds, 0);
  const runs = timings.length > 1 ? ` in ${timings.length} runs` : '';
  const run = timings.length > 0 ? `${seconds} s${runs}, load ${timings[0].loadAtStart}-${timings.at(-1).loadAtEnd}` : '';
  rows.push([path, ...cells.map(String), score.toFixed(1), String(floor), ok ? 'ok' : 'BELOW FLOOR', run]);
}
const header = ['module', 'mutants', 'killed', 'timeout', 'survived', 'no cov', 'errors', 'ignored', 'score %', 'floor %', '', 'run'];
const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)));
for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());

// Modules of stryker.config.json that no report holds: not measured, so not held to a floor.
const { mutate } = JSON.parse(readFileSync('stryker.config.json', 'utf8'));
const matches = (pattern, path) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(path);
const absent = mutate.filter((pattern) => ![...modules.keys()].some((path) => matches(pattern, path)));
if (absent.length > 0) console.log(`not in these reports (not run): ${absent.join(', ')}`);
if (failed) {
  console.error('mme-deploy mutation floors: a module scores below its floor; strengthen its tests (see the survivors above).');
  process.exitCode = 1;
}
