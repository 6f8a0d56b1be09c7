// cfn-lint (1.51, on the machine image) over every CloudFormation template the tests synthesize: tests record their
// templates (recordTemplate: in-process synths through a hook, child-process apps by hand) into the run's directory,
// each distinct template once. Starting cfn-lint costs seconds (importing it and loading its rules: about 4 s of CPU),
// so it starts once: when the first template is recorded (startWhenRecorded, from the global setup), a python imports
// cfn-lint and lints each template as it comes, while the tests run; the global teardown waits for it and has it fork
// the rest over the cores, each child running cfn-lint's own command line over its share. Verdicts are kept between
// runs (verdictCache) and recorded in the repository (RECORDING): a run over templates cfn-lint has already judged
// starts no cfn-lint but to ask it again about one recorded template.

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
import { isDeepStrictEqual } from 'node:util';
import { pickAtRandom, readRecording, recheckCount, recordingFile, recordingInto, stageAnswers } from '../oracle-recording';
import { findTools, missingMessage, scriptPython } from '../tools';

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
 * template. `started` is a cfn-lint started during the run (startWhenRecorded), which may have linted some of them
 * already; the rest are shared out, by size, over `processes` cfn-lint runs at once (startCfnLint): its start-up is
 * paid once, its work per template (about 0.2 s of CPU) is split, and the teardown has both cores to itself.
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
  for (const file of files) {
    const hash = basename(file, TEMPLATE_SUFFIX);
    const namesFile = join(dir, `${hash}.names`);
    const names = existsSync(namesFile)
      ? [...new Set(readFileSync(namesFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as string))]
      : [];
    labels.set(file, `${names.length > 0 ? names.join('; ') : '(unnamed)'} [${hash.slice(0, 8)}]`);
  }
  const runs = await (started ?? startCfnLint(command)).lint(files, processes);
  return runs.flatMap((run) => lintErrors(run.files, labels, run));
}

/** `files` shared out over `processes`, by size: largest first, each to the share with the fewest bytes so far. */
function shareOut(files: readonly string[], processes: number): string[][] {
  const bytes = new Map(files.map((file) => [file, statSync(file).size]));
  const shares = Array.from({ length: Math.max(1, processes) }, () => ({ files: [] as string[], bytes: 0 }));
  for (const file of [...files].sort((a, b) => bytes.get(b)! - bytes.get(a)! || a.localeCompare(b))) {
    const share = shares.reduce((least, s) => (s.bytes < least.bytes ? s : least));
    share.files.push(file);
    share.bytes += bytes.get(file)!;
  }
  return shares.map((s) => s.files).filter((share) => share.length > 0);
}

/** A cfn-lint ready to lint: started (imported, its rules loaded) before it is given the templates. */
export interface CfnLintProcess {
  /** Lints `file` while the tests run, one file at a time (a cfn-lint that is not a python script waits for lint). */
  add(file: string): void;
  /**
   * Lints `files`: those add() has not finished are shared out over `processes` cfn-lint runs at once. One result per
   * run: its files and its output.
   */
  lint(files: readonly string[], processes: number): Promise<Array<LintRun & { readonly files: readonly string[] }>>;
  /** Ends it without linting the rest. */
  stop(): void;
}

/**
 * What the python that starts cfn-lint runs. It imports cfn-lint and loads its rules once, then reads one JSON
 * request per line: {"file"} runs cfn-lint's own command line (cfnlint.runner's Runner, as its console script's main()
 * builds it) over that file here and answers with its exit status and output; {"shares", "out"} forks one child per
 * share, each running the same command line over its share into a file of its own, and answers with the children's
 * exit statuses. An empty stdin (the test run ended before its teardown) ends it.
 */
const DRIVER = `
import contextlib, gc, io, json, os, sys, traceback
if sys.path and sys.path[0] in ('', os.getcwd()):
    del sys.path[0]
from cfnlint.config import ConfigMixIn
from cfnlint.runner import Runner
options = sys.argv[1:]
runner = Runner(ConfigMixIn(options))

def cfn_lint(files):
    runner.config = ConfigMixIn(options + ["--"] + files)
    try:
        runner.cli()
        return 0
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 1

def answer(value):
    sys.stdout.write(json.dumps(value) + "\\n")
    sys.stdout.flush()

for line in sys.stdin:
    request = json.loads(line)
    if "file" in request:
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            status = cfn_lint([request["file"]])
        answer({"file": request["file"], "status": status, "output": output.getvalue()})
        continue
    # The children share the parent's objects copy-on-write: the collector, left to scan them, would copy them all.
    gc.freeze()
    sys.stderr.flush()
    children = []
    for i, files in enumerate(request["shares"]):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.dup2(os.open(os.path.join(request["out"], "%d.json" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), 1)
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                code = cfn_lint(files)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        children.append(pid)
    answer({"statuses": [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]})
    break
`;

/**
 * Starts cfn-lint: when `command` is a python console script (what pip installs), the verdicts kept from earlier runs
 * answer for the templates they know (verdictCache), and for the first one they do not know its python imports cfn-lint
 * and lints from then on what it is given (DRIVER); the process does not keep Node running until lint() waits for it.
 * Otherwise (a wrapper cfn-lint), each share is one plain cfn-lint run, started by lint(), and nothing is kept.
 */
export function startCfnLint(command: string): CfnLintProcess {
  const python = pythonOfScript(command);
  if (!python) {
    return {
      add: () => undefined,
      lint: (files, processes) =>
        Promise.all(shareOut(files, processes).map(async (share) => ({ ...(await cfnLintCli(command, share)), files: share }))),
      stop: () => undefined,
    };
  }
  const cache = verdictCache(python);
  // The driver starts at the first template the cache has no verdict for: a run whose templates all have one starts none.
  let started: Driver | undefined;
  const driver = () => (started ??= startDriver(python));
  const failed = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

  // Files added during the run are linted one at a time, so lint() finds at most one still in hand.
  const queue: string[] = [];
  const done = new Map<string, LintRun & { readonly recorded?: true }>();
  // Recorded verdicts still to be asked about again (RECHECKED): most often one met while the tests run, so cfn-lint
  // starts then (each recorded template has the same chance, recheckOdds), else one picked at random in lint().
  let recheck = recheckCount(RECHECKED);
  const odds = recheckOdds();
  let current: Promise<void> | undefined;
  let failure: Error | undefined;
  let stopped = false;
  const next = () => {
    const file = queue.shift();
    if (file === undefined || stopped) {
      current = undefined;
      return;
    }
    const running = driver();
    current = running.ask({ file }).then(
      (answer) => {
        const run = { status: answer.status as number, stdout: answer.output as string, stderr: running.stderr() };
        done.set(file, run);
        try {
          cache?.keep(file, run);
        } catch (error) {
          // A verdict that is not the recorded one (recheck): the run fails, and nothing more is linted.
          failure = failed(error);
          current = undefined;
          return;
        }
        next();
      },
      (error) => {
        failure = failed(error);
        current = undefined;
      },
    );
  };
  const stop = () => {
    stopped = true;
    started?.end();
  };
  const lint = async (files: readonly string[], processes: number) => {
    started?.ref();
    stopped = true; // nothing more one at a time: what is left is shared out
    await current;
    if (failure) {
      started?.end();
      throw failure;
    }
    for (const file of files) {
      const known = done.has(file) ? undefined : cache?.verdict(file);
      if (known) done.set(file, known);
    }
    // The templates the recording answered still to be linted again (RECHECKED), to be compared with it.
    const recorded = files.filter((file) => done.get(file)?.recorded);
    for (const file of pickAtRandom(recorded, recheck)) {
      recheck--;
      cache!.recheck(file);
      done.delete(file);
    }
    const shares = shareOut(files.filter((file) => !done.has(file)), processes);
    const results = files.filter((file) => done.has(file)).map((file) => ({ ...done.get(file)!, files: [file] }));
    if (shares.length === 0) {
      started?.end();
      return results;
    }
    const running = driver();
    running.ref();
    const out = mkdtempSync(join(tmpdir(), 'mme-cfn-lint-'));
    try {
      const answer = await running.ask({ shares, out });
      running.end();
      const statuses = answer.statuses as number[];
      const runs = shares.map((share, i) => {
        const output = join(out, `${i}.json`);
        const stdout = existsSync(output) ? readFileSync(output, 'utf8') : '';
        return { status: statuses[i]!, stdout, stderr: running.stderr(), files: share };
      });
      for (const run of runs) cache?.keepEach(run.files, run);
      return [...results, ...runs];
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  };
  const added = new Set<string>(); // a file may be reported more than once (two workers renaming the same template)
  const add = (file: string) => {
    if (stopped || added.has(file)) return;
    added.add(file);
    const known = cache?.verdict(file);
    if (known?.recorded && recheck > 0 && Math.random() < odds) {
      recheck--;
      cache!.recheck(file);
    } else if (known) {
      done.set(file, known);
      return;
    }
    queue.push(file);
    if (!current) next();
  };
  return { add, lint, stop };
}

/** The python that runs DRIVER, started: requests in, one answer each, in order. */
interface Driver {
  ask(request: object): Promise<Record<string, unknown>>;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** Keeps Node running until it ends (it does not while the tests run). */
  ref(): void;
  /** Ends its input: it exits once it has answered. */
  end(): void;
}

function startDriver(python: string): Driver {
  const child = spawn(python, ['-c', DRIVER, ...lintOptions()], { stdio: ['pipe', 'pipe', 'pipe'] });
  const streams = [child.stdin, child.stdout, child.stderr] as unknown as Socket[];
  child.unref();
  for (const stream of streams) stream.unref();
  child.stdin.on('error', () => undefined); // a driver that failed says why on stderr and in its status
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ended = new Promise<{ status: number | null; error?: string }>((resolve) => {
    child.on('error', (error) => resolve({ status: null, error: error.message }));
    child.on('close', (status) => resolve({ status }));
  });
  // Its answers, one JSON line each, in the order of the requests.
  const waiting: Array<(answer: Record<string, unknown>) => void> = [];
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) waiting.shift()?.(JSON.parse(line) as Record<string, unknown>);
  });
  return {
    ask: (request) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        waiting.push(resolve);
        child.stdin.write(`${JSON.stringify(request)}\n`);
        void ended.then(({ status, error }) => reject(new Error(`cfn-lint failed (exit ${status}): ${stderr || error}`)));
      }),
    stderr: () => stderr,
    ref: () => {
      child.ref();
      for (const stream of streams) stream.ref();
    },
    end: () => child.stdin.end(),
  };
}

/**
 * cfn-lint's verdicts kept between runs, as the protobuf oracle keeps protoc's: one file per template, named by a hash
 * of cfn-lint's version, its options and the template's text, holding the exit status and the findings of cfn-lint run
 * over that template alone, without their file name (or the Ids made from it). The same cfn-lint, options and
 * text give the same findings, so a run lints only the templates it has not seen, and a run that has seen them all
 * starts no cfn-lint (the suite's 96 templates take about 24 s of CPU, a tenth of the suite's). A run that failed is
 * never kept. MME_CFN_LINT_CACHE=off turns it off and a path puts it there; a cfn-lint whose python cannot tell its
 * version keeps none.
 */
function cacheDir(): string | undefined {
  const setting = process.env.MME_CFN_LINT_CACHE;
  if (setting === 'off') return undefined;
  return setting || join(__dirname, '..', '..', 'node_modules', '.cache', 'mme-deploy-tests', 'cfn-lint');
}

interface VerdictCache {
  /** The kept verdict on `file`, as a run of cfn-lint over it alone (`recorded`: from RECORDING), or undefined. */
  verdict(file: string): (LintRun & { readonly recorded?: true }) | undefined;
  /** Has the verdict cfn-lint gives `file` next (keep, keepEach) compared with the recorded one, which it must equal. */
  recheck(file: string): void;
  /** Keeps the verdict of a run over `file` alone. */
  keep(file: string, run: LintRun): void;
  /** Keeps the verdict on each of `files` from one run over all of them: its findings split by file. */
  keepEach(files: readonly string[], run: LintRun): void;
}

interface KeptVerdict {
  readonly status: number;
  readonly findings: Array<Record<string, unknown>>;
}

/** Exit status bits by finding level (cfnlint/runner/cli.py's _exit, cfn-lint 1.51: informational 8, warning 4, error 2). */
const LEVEL_BITS: Record<string, number> = { Informational: 8, Warning: 4, Error: 2 };

/**
 * cfn-lint's verdicts recorded in the repository (test/oracle-recording.ts), under the verdict cache's keys (a hash of
 * cfn-lint's version, its options and the template): a clean clone lints only the templates they do not know.
 * MME_CFN_LINT_RECORDING names another or is `off`, and setting MME_CFN_LINT_CACHE turns it off too (recordingFile).
 * Each run has cfn-lint judge one recorded template again (RECHECKED), and a verdict that differs fails the run.
 */
export const RECORDING = join(__dirname, 'cfn-lint-answers.json');

interface CfnLintRecording {
  readonly verdicts: Readonly<Record<string, KeptVerdict>>;
}

/** Recorded verdicts each run asks cfn-lint about again: one costs cfn-lint's start, about 4 s of CPU. */
const RECHECKED = 1;
/**
 * The chance that a recorded template met while the tests run is the one asked about again: with the suite's ~100, one
 * is nearly always met early (1 - (15/16)^100 > 99.8 %), so cfn-lint starts beside the tests, not after them.
 * MME_CFN_LINT_RECHECK_ODDS sets it (the harness's tests take each way for sure with 1 and 0).
 */
function recheckOdds(): number {
  const set = Number(process.env.MME_CFN_LINT_RECHECK_ODDS);
  return process.env.MME_CFN_LINT_RECHECK_ODDS !== undefined && set >= 0 && set <= 1 ? set : 1 / 16;
}

function verdictCache(python: string): VerdictCache | undefined {
  const dir = cacheDir();
  const recordingAt = recordingFile('MME_CFN_LINT_RECORDING', 'MME_CFN_LINT_CACHE', RECORDING);
  // Recording: cfn-lint judges every template (no cache, no recording), and its verdicts are staged.
  const recording = recordingAt === undefined ? undefined : recordingInto();
  if (!dir && !recording) return undefined;
  const version = spawnSync(python, ['-c', "from importlib.metadata import version; print(version('cfn-lint'))"], {
    encoding: 'utf8',
  });
  if (version.status !== 0 || !version.stdout.trim()) return undefined;
  const prefix = `${version.stdout.trim()}\0${lintOptions().join('\0')}\0`;
  const keyOf = (file: string) => {
    try {
      return createHash('sha256').update(prefix + readFileSync(file, 'utf8')).digest('hex').slice(0, 32);
    } catch {
      return undefined;
    }
  };
  const recorded = recording || recordingAt === undefined ? {} : (readRecording<CfnLintRecording>(recordingAt)?.verdicts ?? {});
  /** Templates cfn-lint is asked about again, with their recorded verdicts. */
  const rechecked = new Map<string, KeptVerdict>();
  const write = (file: string, kept: KeptVerdict) => {
    const key = keyOf(file);
    if (!key) return;
    const again = rechecked.get(file);
    if (again && !isDeepStrictEqual(kept, again)) {
      throw new Error(
        `cfn-lint's verdict on ${file} differs from the one recorded in ${recordingAt}:\n` +
          `cfn-lint now: ${JSON.stringify(kept)}\nrecorded:     ${JSON.stringify(again)}\n` +
          'Record the verdicts again (npm run record-oracle-answers) if cfn-lint changed on purpose; otherwise the recording is wrong.',
      );
    }
    if (recording) stageAnswers('cfn-lint', { cfnLint: version.stdout.trim(), options: lintOptions() }, 'verdicts', { [key]: kept });
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    const at = join(dir, `${key}.json`);
    const partial = `${at}.${process.pid}.partial`;
    writeFileSync(partial, JSON.stringify(kept));
    renameSync(partial, at);
  };
  const recordedOf = (key: string | undefined) => (key !== undefined && Object.hasOwn(recorded, key) ? recorded[key] : undefined);
  /** The verdict kept here, else the recorded one (`recorded`), else undefined. */
  const keptOf = (file: string): (KeptVerdict & { recorded?: true }) | undefined => {
    if (recording || rechecked.has(file)) return undefined;
    const key = keyOf(file);
    if (!key) return undefined;
    if (dir) {
      try {
        return JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as KeptVerdict;
      } catch {
        // not kept here: the recording, or cfn-lint
      }
    }
    const known = recordedOf(key);
    return known && { ...known, recorded: true };
  };
  const findingsOf = (run: LintRun) => {
    if (run.status === null || (run.status & 1) !== 0) return undefined; // cfn-lint failed
    try {
      const findings = JSON.parse(run.stdout || '[]') as unknown;
      return Array.isArray(findings) ? (findings as Array<Record<string, unknown>>) : undefined;
    } catch {
      return undefined;
    }
  };
  const without = (finding: Record<string, unknown>) => {
    // Id and ParentId are md5 hashes of the match with its file name (aws-cloudformation/cfn-lint:src/cfnlint/match.py:55
    // in 1.51, Match.__post_init__): they say where the template was linted, not what cfn-lint found in it.
    const { Filename: _file, Id: _id, ParentId: _parent, ...rest } = finding;
    return rest;
  };
  return {
    verdict: (file) => {
      const kept = keptOf(file);
      if (!kept) return undefined;
      const findings = kept.findings.map((finding) => ({ ...finding, Filename: file }));
      return { status: kept.status, stdout: JSON.stringify(findings), stderr: '', ...(kept.recorded ? { recorded: true } : {}) };
    },
    recheck: (file) => {
      const known = recordedOf(keyOf(file));
      if (known) rechecked.set(file, known);
    },
    keep: (file, run) => {
      const findings = findingsOf(run);
      if (findings) write(file, { status: run.status!, findings: findings.map(without) });
    },
    keepEach: (files, run) => {
      const findings = findingsOf(run);
      if (!findings) return;
      for (const file of files) {
        const own = findings.filter((finding) => finding.Filename === file);
        const status = own.reduce((bits, finding) => bits | (LEVEL_BITS[String(finding.Level)] ?? 0), 0);
        write(file, { status, findings: own.map(without) });
      }
    },
  };
}

/** What startWhenRecorded leaves for the teardown, on globalThis: the global setup and teardown share no module. */
const EARLY = Symbol.for('mme-deploy.cfn-lint.early-start');
type Early = { watcher: FSWatcher; started?: CfnLintProcess };

/**
 * Starts cfn-lint (startCfnLint) when the first template is recorded in `dir` and gives it each template as it is
 * recorded, so its start-up and much of its work run while the tests do, not after them; a run that records no
 * template starts none. takeEarlyStart hands it to the teardown. The promise settles once it has started and been
 * given the first template (the global setup does not wait for it).
 */
export function startWhenRecorded(dir: string, command: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  return new Promise((resolve) => {
    const early: Early = {
      watcher: watch(dir, (_, name) => {
        early.started ??= startCfnLint(command);
        // A template file appears whole (recordTemplate renames it into place).
        if (name?.endsWith(TEMPLATE_SUFFIX) && existsSync(join(dir, name))) {
          early.started.add(join(dir, name));
          resolve();
        }
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
  const python = scriptPython(command);
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
