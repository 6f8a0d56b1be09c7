// Jest global setup, run once before any test file: builds dist/ when a source is newer (the bundled CLI, the packed
// tarball and the quick start read it, and nothing rebuilds it during the run), finds the machine tools the gated
// tests need (test/tools.ts), and makes the run's directories for cfn-lint's templates and the skipped tests' log.
// cfn-lint itself starts once the first template is recorded (test/constructs/cfn-lint.ts).
// Workers inherit the environment variables set here, and so do the processes they start without an `env` of their
// own (a `cdk synth` app's pack worker, a bundled CLI): a test file's changes to process.env reach none of those.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LINT_DIR_VARIABLE, startWhenRecorded } from './constructs/cfn-lint';
import { EXTRA_CA_VARIABLE, findTools, INVENTORY_VARIABLE, probeTools, pythonWith, SKIP_LOG_VARIABLE } from './tools';

// scripts/build.js is the build `npm run build` and `prepare` run; plain JavaScript, so required as is.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildIfStale } = require('../scripts/build.js') as { buildIfStale: () => string };

export default function setup(): void {
  const built = buildIfStale();
  if (built.startsWith('built')) process.stderr.write(`\nglobal setup: ${built}\n`);
  const tools = probeTools();
  process.env[INVENTORY_VARIABLE] = JSON.stringify(tools);
  // `--run-python` and the model.py syntax check start python3: give them the interpreter found above, not a version
  // manager's shim that costs a second of CPU per start. A developer's own MME_DEPLOY_PYTHON wins.
  const python = pythonWith(['numpy']) ?? tools.tools.python3;
  if (python && !process.env.MME_DEPLOY_PYTHON) process.env.MME_DEPLOY_PYTHON = python;
  setAsideExtraCaCerts();
  const run = mkdtempSync(join(tmpdir(), 'mme-test-run-'));
  process.env[SKIP_LOG_VARIABLE] = join(run, 'skipped.jsonl');
  process.env.MME_TEST_RUN_DIR = run;
  process.env[LINT_DIR_VARIABLE] = join(run, 'cfn-templates');
  // cfn-lint starts (imports itself, loads its rules: seconds) when the first template is recorded, during the run.
  const cfnLint = findTools({ tools: ['cfn-lint'] });
  if (cfnLint.ok) void startWhenRecorded(process.env[LINT_DIR_VARIABLE], cfnLint.paths['cfn-lint']!);
}

/**
 * The suite's node processes talk to loopback servers only, npm excepted: a node process loads NODE_EXTRA_CA_CERTS's file
 * and the bundled certificates when it starts, TLS or not (nodejs/node#40524: OpenSSL 3 made that slow), 40 ms of CPU
 * per start with a system bundle named (node 20, `mme-deploy --version`, measured). It is kept in EXTRA_CA_VARIABLE and
 * given back to npm (test/constructs/packed-tarball.test.ts NPM_ENV), which may reach the registry through a proxy that
 * needs it.
 */
function setAsideExtraCaCerts(): void {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (file === undefined) return;
  process.env[EXTRA_CA_VARIABLE] = file;
  delete process.env.NODE_EXTRA_CA_CERTS;
}
