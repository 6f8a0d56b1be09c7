#!/usr/bin/env node
// Writes the CLI as one bundled file, dist/bin/mme-deploy-cli.js: the CLI entry, every module of lib/ it can run, and
// commander. Node 20 spends about 0.2 ms on each module file it loads, and `validate` alone loads about 70 of ours.
// Then dist/bin/mme-deploy.js, the command (bin/launcher.ts), which starts the bundle from the V8 code cache written
// last, dist/bin/mme-deploy-cli.cache, by one run of `--help` (bench/startup.js). Other packages stay external
// (node_modules), so the AWS SDK, aws-cdk-lib and zod still load only inside the commands that need them, and
// `await import()` of our own modules stays lazy (esbuild runs a bundled module's body only when it is first
// imported). `npm run build` runs this after tsc, which writes the library (dist/lib) that programs import and
// leaves bin/mme-deploy.ts to this script (tsconfig.build.json excludes it).
'use strict';
const { buildSync } = require('esbuild');
const { execFileSync } = require('node:child_process');
const { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const pkg = require(join(root, 'package.json'));
// Packages stay external, except commander: every command parses with it, and bundled it costs no file loads of its
// own (seven files otherwise). The others load only inside the commands that use them.
const BUNDLED = new Set(['commander']);
const external = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies })
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);
const bin = join(root, 'dist', 'bin');
const common = {
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
  // `import()` of a package becomes `require`, as tsc writes it in the library (dist/lib): the launcher compiles the
  // bundle with vm, whose scripts have no loader for `import()` without an experimental option.
  supported: { 'dynamic-import': false },
};
// Each file is written beside its place and renamed into it: a test (or a shell) running the CLI while a rebuild is
// under way sees the old file or the new one, never a half-written one. The old cache goes first (the launcher would
// refuse it for the new bundle anyway: it checks the bundle's CRC-32).
const partial = (file) => `${file}.${process.pid}.tmp`;
const cli = join(bin, 'mme-deploy-cli.js');
const launcher = join(bin, 'mme-deploy.js');
const cache = join(bin, 'mme-deploy-cli.cache');
rmSync(cache, { force: true });
buildSync({ ...common, entryPoints: [join(root, 'bin', 'mme-deploy.ts')], outfile: partial(cli) });
// The bundle is written as node would wrap a CommonJS module, one function of the module's five variables, for the
// launcher to compile the file as it is (wrapping it there cost a copy of its 800 KB at every start); its `#!` line
// goes.
let body = readFileSync(partial(cli), 'utf8');
if (body.startsWith('#!')) body = body.slice(body.indexOf('\n') + 1);
writeFileSync(
  partial(cli),
  '// The CLI, bundled: dist/bin/mme-deploy.js (bin/launcher.ts) runs it; by itself this file only defines a function.\n' +
    `(function (exports, require, module, __filename, __dirname) {${body}\n})\n`,
);
renameSync(partial(cli), cli);
buildSync({ ...common, entryPoints: [join(root, 'bin', 'launcher.ts')], outfile: partial(launcher) });
chmodSync(partial(launcher), 0o755);
renameSync(partial(launcher), launcher);
// The cache, from one run of `--help`: commander and every command's definition, compiled. A node without zlib.crc32
// (before 20.15) cannot check a cache, so it makes none: the CLI then compiles at every start.
if (require('node:zlib').crc32 !== undefined) {
  // Without NODE_OPTIONS: V8 refuses a cache made under other V8 flags, and the CLI runs without them.
  const { NODE_OPTIONS, ...env } = process.env;
  execFileSync(process.execPath, [launcher, '--help'], {
    env: { ...env, MME_DEPLOY_WRITE_CODE_CACHE: partial(cache) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  renameSync(partial(cache), cache);
}
