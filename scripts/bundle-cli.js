#!/usr/bin/env node
// Writes dist/bin/mme-deploy.js as one bundled file: the CLI entry, every module of lib/ it can run, and commander.
// Node 20 spends about 0.2 ms on each module file it loads, and `validate` alone loads about 70 of ours; bundled,
// `validate` and `--help` stay within 1.5x of bare node (bench/startup.js). Other packages stay external
// (node_modules), so the AWS SDK, aws-cdk-lib and zod still load only inside the commands that need them, and
// `await import()` of our own modules stays lazy (esbuild runs a bundled module's body only when it is first
// imported). `npm run build` runs this after tsc, which writes the library (dist/lib) that programs import and
// leaves bin/mme-deploy.ts to this script (tsconfig.build.json excludes it).
'use strict';
const { buildSync } = require('esbuild');
const { chmodSync, renameSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const pkg = require(join(root, 'package.json'));
// Packages stay external, except commander: every command parses with it, and bundled it costs no file loads of its
// own (seven files otherwise). The others load only inside the commands that use them.
const BUNDLED = new Set(['commander']);
const external = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies })
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);
const outfile = join(root, 'dist', 'bin', 'mme-deploy.js');
// Written beside it and renamed into place: a test (or a shell) running the CLI while a rebuild is under way sees the
// old file or the new one, never a half-written one.
const partial = `${outfile}.${process.pid}.tmp`;
buildSync({
  entryPoints: [join(root, 'bin', 'mme-deploy.ts')],
  outfile: partial,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external,
  tsconfig: join(root, 'tsconfig.build.json'),
  // Whitespace and comments out: less for V8 to scan at every start. Names are kept, so stack traces stay readable.
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
});
chmodSync(partial, 0o755);
renameSync(partial, outfile);
