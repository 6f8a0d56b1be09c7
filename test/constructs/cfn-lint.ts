// cfn-lint (1.51, on the machine image) over every CloudFormation template the tests synthesize, in one cfn-lint run:
// tests record their templates (recordTemplate: in-process synths through a hook, child-process apps by hand) into
// the run's directory, and the run's global teardown lints them all. Starting cfn-lint costs seconds (importing it and
// loading its rules: about 4 s of CPU), so one start for the whole suite: a python process imports cfn-lint once, then
// forks one child per share of the templates, each running cfn-lint's own command line over its share.

import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Socket } from 'node:net';
import { findTools, missingMessage } from '../tools';

/** The environment variable naming the run's directory of templates to lint (set by the global setup). */
export const LINT_DIR_VARIABLE = 'MME_CFN_LINT_DIR';

const TEMPLATE_SUFFIX = '.template.json';

/**
 * Queues `template` for the run's cfn-lint; `name` says where it came from (test name, stack). Identical templates
 * are linted once, under every name that recorded them. Outside a Jest run with the global setup, lints at once and
 * throws on errors.
 */
export function recordTemplate(name: string, template: unknown): void {
  const dir = process.env[LINT_DIR_VARIABLE];
  if (!dir) {
    const errors = cfnLint({ [name]: template });
    if (errors.length > 0) throw new Error(`cfn-lint errors:\n${formatCfnLintErrors(errors)}`);
    return;
  }
  mkdirSync(dir, { recursive: true });
  const json = templateText(template);
  const hash = createHash('sha256').update(json).digest('hex').slice(0, 16);
  const file = join(dir, `${hash}${TEMPLATE_SUFFIX}`);
  // Several workers may record the same template at once: each writes its own file and renames it into place, so
  // the file is never seen half written. The names file takes one appended line per name.
  if (!existsSync(file)) {
    const partial = join(dir, `.${hash}.${process.pid}.partial`);
    writeFileSync(partial, json);
    renameSync(partial, file);
  }
  appendFileSync(join(dir, `${hash}.names`), `${JSON.stringify(name)}\n`);
}

/** A template as cfn-lint reads it: one key per line, so its findings' line numbers point somewhere readable. */
function templateText(template: unknown): string {
  return JSON.stringify(template, null, 1);
}

/**
 * Lints every template recorded in `dir`; returns the errors, each naming every test and stack that recorded its
 * template. The templates are shared out, by size, over `processes` cfn-lint runs at once (forked from one start:
 * startCfnLint): its start-up is paid once, its work per template (about 0.2 s of CPU) is split, and the teardown
 * that waits for it has both cores to itself. `started` is a cfn-lint started before the templates were known.
 */
export async function lintRecordedTemplates(
  dir: string,
  command = cfnLintCommand(),
  processes = Math.min(2, availableParallelism()),
  started?: CfnLintProcess,
): Promise<CfnLintError[]> {
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(TEMPLATE_SUFFIX)).map((f) => join(dir, f)) : [];
  if (files.length === 0) {
    started?.stop();
    return [];
  }
  const labels = new Map<string, string>();
  const bytes = new Map<string, number>();
  for (const file of files) {
    const hash = basename(file, TEMPLATE_SUFFIX);
    const namesFile = join(dir, `${hash}.names`);
    const names = existsSync(namesFile)
      ? [...new Set(readFileSync(namesFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as string))]
      : [];
    labels.set(file, `${names.length > 0 ? names.join('; ') : '(unnamed)'} [${hash.slice(0, 8)}]`);
    bytes.set(file, statSync(file).size);
  }
  // Largest first, each to the run with the fewest bytes so far.
  const groups = Array.from({ length: Math.max(1, processes) }, () => ({ files: [] as string[], bytes: 0 }));
  for (const file of [...files].sort((a, b) => bytes.get(b)! - bytes.get(a)! || a.localeCompare(b))) {
    const group = groups.reduce((least, g) => (g.bytes < least.bytes ? g : least));
    group.files.push(file);
    group.bytes += bytes.get(file)!;
  }
  const shares = groups.map((g) => g.files).filter((share) => share.length > 0);
  const runs = await (started ?? startCfnLint(command)).lint(shares);
  return runs.flatMap((run, i) => lintErrors(shares[i]!, labels, run));
}

/** A cfn-lint ready to lint: started (imported, its rules loaded) before it is given the templates. */
export interface CfnLintProcess {
  /** Lints each share of template files in a cfn-lint run of its own, all at once; one run's output per share. */
  lint(shares: readonly (readonly string[])[]): Promise<LintRun[]>;
  /** Ends it without linting anything. */
  stop(): void;
}

/**
 * What the python that starts cfn-lint runs: cfn-lint's own command line (cfnlint.runner's Runner, as its console
 * script's main() builds it) over each share, in a child forked once cfn-lint is imported and its rules are loaded.
 * Each child's output goes to a file of its own; the parent prints the children's exit statuses. An empty stdin (the
 * test run ended before its teardown) ends it.
 */
const DRIVER = `
import gc, json, os, sys, traceback
if sys.path and sys.path[0] in ('', os.getcwd()):
    del sys.path[0]
from cfnlint.config import ConfigMixIn
from cfnlint.runner import Runner
options = sys.argv[1:]
runner = Runner(ConfigMixIn(options))
request = sys.stdin.read()
if not request:
    sys.exit(0)
request = json.loads(request)
# The children share the parent's objects copy-on-write: the collector, left to scan them, would copy them all.
gc.freeze()
sys.stdout.flush()
sys.stderr.flush()
children = []
for i, files in enumerate(request["shares"]):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.dup2(os.open(os.path.join(request["out"], "%d.json" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), 1)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            runner.config = ConfigMixIn(options + ["--"] + files)
            runner.cli()
            code = 0
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    children.append(pid)
print(json.dumps([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]))
`;

/**
 * Starts cfn-lint: when `command` is a python console script (what pip installs), its python imports cfn-lint now and
 * waits for the templates (DRIVER); the process does not keep Node running until it is asked to lint. Otherwise (a
 * wrapper cfn-lint), each share is one plain cfn-lint run, started when asked.
 */
export function startCfnLint(command: string): CfnLintProcess {
  const python = pythonOfScript(command);
  if (!python) {
    return { lint: (shares) => Promise.all(shares.map((share) => cfnLintCli(command, share))), stop: () => undefined };
  }
  const child = spawn(python, ['-c', DRIVER, ...lintOptions()], { stdio: ['pipe', 'pipe', 'pipe'] });
  const streams = [child.stdin, child.stdout, child.stderr] as unknown as Socket[];
  child.unref();
  for (const stream of streams) stream.unref();
  child.stdin.on('error', () => undefined); // a driver that failed to start says why on stderr and in its status
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ended = new Promise<{ status: number | null; error?: string }>((resolve) => {
    child.on('error', (error) => resolve({ status: null, error: error.message }));
    child.on('close', (status) => resolve({ status }));
  });
  const stop = () => void child.stdin.end();
  const lint = async (shares: readonly (readonly string[])[]): Promise<LintRun[]> => {
    if (shares.length === 0) {
      stop();
      return [];
    }
    child.ref();
    for (const stream of streams) stream.ref();
    const out = mkdtempSync(join(tmpdir(), 'mme-cfn-lint-'));
    try {
      child.stdin.end(JSON.stringify({ shares, out }));
      const { status, error } = await ended;
      let statuses: unknown;
      try {
        statuses = JSON.parse(stdout);
      } catch {
        statuses = undefined;
      }
      if (status !== 0 || !Array.isArray(statuses) || statuses.length !== shares.length) {
        throw new Error(`cfn-lint failed (exit ${status}): ${stderr || error || stdout}`);
      }
      return shares.map((_, i) => {
        const output = join(out, `${i}.json`);
        return { status: statuses[i] as number, stdout: existsSync(output) ? readFileSync(output, 'utf8') : '', stderr };
      });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  };
  return { lint, stop };
}

/** What startWhenRecorded leaves for the teardown, on globalThis: the global setup and teardown share no module. */
const EARLY = Symbol.for('mme-deploy.cfn-lint.early-start');
type Early = { watcher: FSWatcher; started?: CfnLintProcess };

/**
 * Starts cfn-lint (startCfnLint) when the first template is recorded in `dir`, so its start-up runs while the tests
 * do, not after them; a run that records no template starts none. takeEarlyStart hands it to the teardown. The
 * promise settles once it has started (the global setup does not wait for it).
 */
export function startWhenRecorded(dir: string, command: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  return new Promise((resolve) => {
    const early: Early = {
      watcher: watch(dir, () => {
        early.watcher.close();
        early.started ??= startCfnLint(command);
        resolve();
      }),
    };
    early.watcher.unref();
    (globalThis as Record<symbol, unknown>)[EARLY] = early;
  });
}

/** The cfn-lint startWhenRecorded started, if it did; it stops watching. */
export function takeEarlyStart(): CfnLintProcess | undefined {
  const early = (globalThis as Record<symbol, unknown>)[EARLY] as Early | undefined;
  delete (globalThis as Record<symbol, unknown>)[EARLY];
  early?.watcher.close();
  return early?.started;
}

/** The python that runs `command` when it is a python console script (`#!/path/to/python`), else undefined. */
function pythonOfScript(command: string): string | undefined {
  let head: string;
  try {
    head = readFileSync(command, 'utf8').slice(0, 256);
  } catch {
    return undefined;
  }
  const python = /^#!(\/\S*\/python[\d.]*)[ \t]*\r?\n/.exec(head)?.[1];
  return python && existsSync(python) ? python : undefined;
}

/**
 * Checks left out, each for a reason that is not a template bug:
 * - E3006 "resource type does not exist in region": cfn-lint 1.51's region table predates resource types that
 *   exist today (the only filter the issue allows without further explanation).
 */
export const IGNORED_CHECKS = ['E3006'];

/**
 * Single findings where cfn-lint 1.51's bundled resource schemas lag the CloudFormation registry, matched exactly
 * (rule, resource type, property path), so the same rule still catches everything else:
 * - E3002 on AWS::CloudWatch::Dashboard Tags: CloudFormation takes Tags there (aws-cdk-lib 2.269's CfnDashboard,
 *   generated from the registry schema, is ITaggableV2 and documents cfn-cloudwatch-dashboard-tags); cfn-lint's schema
 *   predates them. The endpoint's `tags` reach its dashboard on purpose.
 */
const SCHEMA_LAGS = [{ rule: 'E3002', type: 'AWS::CloudWatch::Dashboard', path: /^Resources\/[^/]+\/Properties\/Tags$/ }];

export interface CfnLintError {
  readonly template: string;
  readonly rule: string;
  readonly path: string;
  readonly message: string;
}

/** The cfn-lint on PATH; a missing one is an error naming how to install it (test/tools.ts decides skip or fail). */
export function cfnLintCommand(): string {
  const found = findTools({ tools: ['cfn-lint'] });
  if (!found.ok) throw new Error(`cfn-lint ${missingMessage(found)}`);
  return found.paths['cfn-lint']!;
}

/** Lints `templates` (name → template) in one cfn-lint run; returns its errors (warnings and infos are not kept). */
export function cfnLint(templates: Record<string, unknown>, command = cfnLintCommand()): CfnLintError[] {
  const names = Object.keys(templates);
  if (names.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'mme-cfn-lint-'));
  try {
    const labels = new Map<string, string>();
    names.forEach((name, i) => {
      // File names stay short (a test's name can be long); cfn-lint's findings are mapped back by file.
      const file = join(dir, `${String(i).padStart(3, '0')}-${name.replace(/[^A-Za-z0-9._-]/g, '_').slice(-80)}${TEMPLATE_SUFFIX}`);
      writeFileSync(file, templateText(templates[name]));
      labels.set(file, name);
    });
    const files = [...labels.keys()];
    const run = spawnSync(command, cliArguments(files), { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return lintErrors(files, labels, { ...run, error: run.error?.message });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One plain cfn-lint run over `files`, in a child that does not block the event loop. */
function cfnLintCli(command: string, files: readonly string[]): Promise<LintRun> {
  return new Promise<LintRun>((resolve) =>
    execFile(command, cliArguments(files), { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      // A non-zero exit is an error here, with the status as its code (a string code: cfn-lint could not start).
      resolve({ status: !error ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr, error: error?.message }),
    ),
  );
}

export interface LintRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly error?: string | undefined;
}

/** cfn-lint's options, the same for every run: JSON findings, the checks left out. */
function lintOptions(): string[] {
  return ['--format', 'json', '--ignore-checks', ...IGNORED_CHECKS];
}

function cliArguments(files: readonly string[]): string[] {
  return [...lintOptions(), '--', ...files];
}

/** The errors of a cfn-lint run over `files`, each under its file's label; throws when cfn-lint itself failed. */
function lintErrors(files: readonly string[], labels: ReadonlyMap<string, string>, run: LintRun): CfnLintError[] {
  // Exit codes are a bit mask (2 errors, 4 warnings, 8 infos); anything else, or no JSON, means cfn-lint failed.
  let findings: Array<{ Filename: string; Level: string; Rule: { Id: string }; Location: { Path: unknown[] }; Message: string }>;
  try {
    findings = JSON.parse(run.stdout || '[]');
  } catch {
    throw new Error(`cfn-lint failed (exit ${run.status}): ${run.stderr || run.error}`);
  }
  if (run.status === null || (run.status & 1) !== 0) throw new Error(`cfn-lint failed (exit ${run.status}): ${run.stderr}`);
  const typeAt = (file: string, path: unknown[]) => {
    if (path[0] !== 'Resources' || !files.includes(file)) return undefined;
    const template = JSON.parse(readFileSync(file, 'utf8')) as { Resources?: Record<string, { Type?: string }> };
    return template.Resources?.[String(path[1])]?.Type;
  };
  return findings
    .filter((f) => f.Level === 'Error')
    .filter(
      (f) =>
        !SCHEMA_LAGS.some(
          (lag) => lag.rule === f.Rule.Id && lag.path.test(f.Location.Path.join('/')) && lag.type === typeAt(f.Filename, f.Location.Path),
        ),
    )
    .map((f) => ({
      template: labels.get(f.Filename) ?? f.Filename,
      rule: f.Rule.Id,
      path: f.Location.Path.join('/'),
      message: f.Message,
    }));
}

/** One line per error, for a failing assertion. */
export function formatCfnLintErrors(errors: CfnLintError[]): string {
  return errors.map((e) => `${e.template}: ${e.rule} at ${e.path}: ${e.message}`).join('\n');
}
