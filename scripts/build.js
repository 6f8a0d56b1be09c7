#!/usr/bin/env node
// The one build: tsc writes the library to dist/ (tsconfig.build.json), then scripts/bundle-cli.js writes the CLI as
// one file, dist/bin/mme-deploy-cli.js, which dist/bin/mme-deploy.js starts from a V8 code cache. `npm run build`
// always rebuilds; `--if-stale` (the clone's `npm ci` through `prepare`, a git-URL install, and the test run's global
// setup) rebuilds only when a source is newer than dist/, so nothing that reads dist/ while it runs sees it deleted,
// and a second install or test run costs no build.
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, rmSync, statSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
/** What dist/ is made from: the sources, the build's own scripts and settings. */
const INPUT_DIRECTORIES = ['lib', 'bin', 'constructs'];
const INPUT_FILES = ['scripts/build.js', 'scripts/bundle-cli.js', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
/** What the build writes last (tsc, then the bundle); the older of the two dates the build. */
const OUTPUTS = ['dist/lib/index.js', 'dist/constructs/index.js', 'dist/bin/mme-deploy.js'];

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function newestUnder(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestUnder(path));
    else if (/\.(ts|js|json)$/.test(entry.name)) newest = Math.max(newest, mtime(path) ?? 0);
  }
  return newest;
}

/** Why dist/ under `root` must be (re)built, or undefined when it is current. */
function staleReason(root = ROOT) {
  const built = OUTPUTS.map((output) => mtime(join(root, output)));
  const missing = OUTPUTS.find((_, i) => built[i] === undefined);
  if (missing) return `${missing} is missing`;
  const oldestOutput = Math.min(...built);
  for (const input of [...INPUT_DIRECTORIES, ...INPUT_FILES]) {
    const path = join(root, input);
    const newest = INPUT_DIRECTORIES.includes(input) ? newestUnder(path) : (mtime(path) ?? 0);
    if (newest > oldestOutput) return `${input} is newer than dist/`;
  }
  return undefined;
}

/** Deletes dist/ and builds it again. */
function build(root = ROOT) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) throw new Error('typescript is not installed: run `npm ci` first');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle-cli.js')], { cwd: root, stdio: 'inherit' });
}

/** Builds when stale; returns what it did, for the caller to print. */
function buildIfStale(root = ROOT) {
  const reason = staleReason(root);
  if (reason === undefined) return 'dist/ is current: no build';
  build(root);
  return `built dist/ (${reason})`;
}

/**
 * Why a build step failed, in one line: its command, and how it ended (execFileSync's error has the exit status, or
 * the signal that ended it: a step killed from outside prints nothing of its own).
 */
function failureOf(error) {
  const how = error.signal ? `killed by ${error.signal}` : typeof error.status === 'number' ? `exit ${error.status}` : '';
  return `${error.message.split('\n')[0]}${how ? ` (${how})` : ''}`;
}

/** The command line: `node scripts/build.js [--if-stale]`; `root` is the checkout to build. */
function main(args, root = ROOT) {
  try {
    if (args.includes('--if-stale')) process.stderr.write(`mme-deploy: ${buildIfStale(root)}\n`);
    else build(root);
  } catch (error) {
    process.stderr.write(`mme-deploy: build failed: ${failureOf(error)}\n`);
    process.exitCode = 1;
  }
}

module.exports = { build, buildIfStale, main, staleReason };

if (require.main === module) main(process.argv.slice(2));
