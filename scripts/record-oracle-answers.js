#!/usr/bin/env node
// Records what the suite's oracles answer (test/oracle-recording.ts): runs the suite under CI=true (every oracle's tool
// required) with each oracle asking its tool about every input, then writes the answers the tools gave:
// protoc's to test/config/protoc-answers.json, cfn-lint's to test/constructs/cfn-lint-answers.json. Run it after
// changing the texts the conformance suite parses or the constructs' templates (or on a new protoc or cfn-lint): a clean
// clone then asks the tools about nothing but the few recorded inputs each run checks again.
//
//   npm run record-oracle-answers               the whole suite; the recordings are replaced
//   npm run record-oracle-answers -- <paths>    those test files; their answers are added to the recordings
'use strict';
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const ORACLES = [
  {
    name: 'protoc',
    file: join(ROOT, 'test', 'config', 'protoc-answers.json'),
    header: ['protoc', 'proto', 'decoder'],
    field: 'answers',
    about: "protoc's verdict on each text the conformance suite parses (keyed by the text's hash), as recorded by " +
      'scripts/record-oracle-answers.js; test/config/protobuf-oracle.ts uses it and asks protoc again about some each run',
  },
  {
    name: 'cfn-lint',
    file: join(ROOT, 'test', 'constructs', 'cfn-lint-answers.json'),
    header: ['cfnLint', 'options'],
    field: 'verdicts',
    about: "cfn-lint's verdict on each template the suite synthesizes (keyed by a hash of cfn-lint's version, options and " +
      'the template), as recorded by scripts/record-oracle-answers.js; test/constructs/cfn-lint.ts uses it and asks ' +
      'cfn-lint again about one each run',
  },
];

function main(args) {
  const stage = mkdtempSync(join(tmpdir(), 'mme-oracle-record-'));
  try {
    const jest = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), ...args], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, CI: 'true', MME_ORACLE_RECORD: stage },
    });
    if (jest.status !== 0) {
      process.stderr.write('record-oracle-answers: the suite failed, so nothing was recorded. Fix the failures, then run it again.\n');
      return 1;
    }
    for (const oracle of ORACLES) {
      const recorded = merge(oracle, join(stage, oracle.name), args.length > 0);
      if (recorded === undefined) continue;
      process.stdout.write(`record-oracle-answers: ${recorded} ${oracle.name} answers in ${relative(ROOT, oracle.file)}\n`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`record-oracle-answers: ${err.message}\n`);
    return 1;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * Writes the oracle's recording from the answers its calls staged (each file: the header fields and some answers),
 * added to the recording there when `adding`; the number of answers recorded, or undefined when none were staged.
 */
function merge(oracle, dir, adding) {
  let files;
  try {
    files = readdirSync(dir).filter((name) => name.endsWith('.json')).sort();
  } catch {
    return undefined;
  }
  if (files.length === 0) return undefined;
  const staged = files.map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')));
  const header = pick(staged[0], oracle.header);
  const answers = {};
  if (adding) {
    let existing;
    try {
      existing = JSON.parse(readFileSync(oracle.file, 'utf8'));
    } catch {
      existing = undefined;
    }
    if (existing && sameHeader(pick(existing, oracle.header), header)) Object.assign(answers, existing[oracle.field]);
  }
  for (const part of staged) {
    if (!sameHeader(pick(part, oracle.header), header)) {
      throw new Error(`${oracle.name} answered under two settings in one run (${JSON.stringify(header)} and ` +
        `${JSON.stringify(pick(part, oracle.header))}); one recording holds one.`);
    }
    Object.assign(answers, part[oracle.field]);
  }
  writeFileSync(oracle.file, formatRecording({ about: oracle.about, ...header }, oracle.field, answers));
  return Object.keys(answers).length;
}

function pick(object, keys) {
  return Object.fromEntries(keys.map((key) => [key, object[key]]));
}

function sameHeader(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The recording as JSON for review: the header fields, then one answer per line in key order, each with its objects'
 * keys sorted (python's protobuf lists a map field's keys in another order each run), so that recording again shows in
 * a diff only the answers that changed.
 */
function formatRecording(header, field, answers) {
  const lines = Object.entries(header).map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  const entries = Object.keys(answers)
    .sort()
    .map((key) => `    ${JSON.stringify(key)}: ${JSON.stringify(sortedKeys(answers[key]))}`);
  return `{\n${lines.join(',\n')},\n  ${JSON.stringify(field)}: {\n${entries.join(',\n')}\n  }\n}\n`;
}

/** `value` with every object's keys in sorted order (arrays keep theirs). */
function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys(value[key])]));
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));

module.exports = { formatRecording, main, merge, ORACLES };
