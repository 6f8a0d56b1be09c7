#!/usr/bin/env node
// After `stryker run` (npm run test:mutation): the mutation score of each module, and the floor it must keep.
// Score = detected / (detected + undetected): killed and timed-out mutants over those plus survived and uncovered
// ones, as Stryker counts it; mutants that do not compile or run (errors) and ignored ones are left out.
'use strict';

const { readFileSync } = require('node:fs');
const { relative } = require('node:path');

// The floor of each module, in percent: the score measured when the module's tests were last strengthened, rounded
// down to a multiple of 5, so that a weaker test or new untested code fails the run (docs/testing.md says why).
const FLOORS = {
  'lib/cli/signals.ts': 90,
};
const DEFAULT_FLOOR = 60;

const report = JSON.parse(readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8'));
const rows = [];
let failed = false;
for (const [file, { mutants }] of Object.entries(report.files)) {
  const path = relative(process.cwd(), file) || file;
  const count = (...statuses) => mutants.filter((mutant) => statuses.includes(mutant.status)).length;
  const detected = count('Killed', 'Timeout');
  const undetected = count('Survived', 'NoCoverage');
  const score = detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected);
  const floor = FLOORS[path] ?? DEFAULT_FLOOR;
  const ok = score >= floor;
  failed ||= !ok;
  rows.push([path, score.toFixed(1), String(floor), String(detected), String(undetected), ok ? 'ok' : 'BELOW FLOOR']);
}
const header = ['module', 'score %', 'floor %', 'detected', 'undetected', ''];
const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)));
for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
if (failed) {
  console.error('mme-deploy mutation floors: a module scores below its floor; strengthen its tests (see the survivors above).');
  process.exitCode = 1;
}
