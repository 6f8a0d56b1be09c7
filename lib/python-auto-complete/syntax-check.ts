// Compiles python models' sources to a syntax tree, never running them: one python3 process for every file of a run,
// the files streamed to its stdin as they are found. `ast.parse` with `feature_version` refuses syntax newer than the target image's
// Python (`except*` for 3.10), as that Python would when the stub imports model.py.
//
// The bytes are decoded as the import system decodes a source file (PEP 263: a BOM or a coding cookie, else UTF-8;
// tokenize.detect_encoding), so a Latin-1 file that declares itself compiles, and one that does not is refused with
// the words python's import uses ("Non-UTF-8 code starting with ...").

import { createHash } from 'node:crypto';
import { startPython, type PythonRun, type StartedPython } from './spawn-python';
import { MmeError } from '../errors';
import { knownInterpreter, pythonName, rememberInterpreter } from './interpreter';

/** One source to check. */
export interface SyntaxJob {
  /** The name python's messages use for the file. */
  readonly name: string;
  readonly source: Buffer;
}

/** Why one source does not compile: python's exception, with the place it gives (1-based, column in characters). */
export interface SyntaxFault {
  /** `SyntaxError`, `IndentationError`, `TabError`, or `RecursionError` for nesting too deep to parse. */
  readonly type: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

export type SyntaxCheckResult =
  | {
      readonly ran: true;
      /** The interpreter's own path (sys.executable): `--run-python` starts it without asking again. */
      readonly executable: string;
      /** The interpreter's `major.minor`. */
      readonly version: string;
      /** Per job, in order: undefined when it compiles. */
      readonly faults: (SyntaxFault | undefined)[];
    }
  /**
   * Nothing was checked: no interpreter answers to the name (`missing`), or it could not do the check (`failed`: too
   * old for feature_version, a crash, a timeout), `reason` saying which.
   */
  | { readonly ran: false; readonly python: string; readonly missing: boolean; readonly reason: string };

export interface SyntaxCheckOptions {
  /** The Python the sources must be valid for, `major.minor` (the target image's). */
  readonly pythonVersion: string;
  /** The interpreter. @default MME_DEPLOY_PYTHON, else `python3` */
  readonly python?: string;
  /** The environment: its PATH finds the interpreter, its MME_DEPLOY_PYTHON names it. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** @default 60 seconds for the whole batch */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /**
   * A python already running that checks instead of one of the check's own (a `--run-python` session's fork server,
   * run.ts syntaxCheckRunner): `python` and `env` are then its. When it cannot (it is gone, stuck or stopped: `run`
   * answers undefined), the check starts a python of its own, so its verdicts do not depend on what ran there before.
   */
  readonly runner?: SyntaxRunner;
}

/** Runs the check in a python already running; `run` is undefined when it cannot. */
export interface SyntaxRunner {
  /** The interpreter, as messages name it. */
  readonly python: string;
  /** Runs SYNTAX_VERDICTS on the request (JSON: `{"syntax_check": {"feature", "files"}}`), as a python of its own would. */
  run(request: string, timeoutMs: number, signal?: AbortSignal): Promise<PythonRun | undefined>;
}

/**
 * The check itself, shared by the checker below and the fork server of a `--run-python` session (stand-in.ts), which
 * runs it in a process it forks: `syntax_verdicts(feature, sources)` parses each `(name, bytes)` of `sources` for the
 * Python `feature` ([major, minor]) and answers the faults by index, valid files left out (a repository of ten thousand
 * valid files answers in a few bytes).
 */
export const SYNTAX_VERDICTS = `
def syntax_verdicts(feature, sources):
    import _ast, sys, warnings
    warnings.simplefilter("ignore")
    if sys.version_info < (3, 8):
        return {"too_old": "%d.%d" % sys.version_info[:2]}
    # ast.parse knows no feature_version below (3, 7) in recent pythons.
    feature = max(tuple(feature), (3, 7))

    def parse(source, name):
        # ast.parse itself, without importing ast, which imports enum and contextlib (10 ms of the checker's start):
        # compile() with PyCF_ONLY_AST and the minor version (python/cpython Lib/ast.py: v3.8.18 :30-48, v3.11.7 :33-51,
        # v3.13.0 :34-55, whose PyCF_OPTIMIZED_AST is only for optimize > 0).
        compile(source, name, "exec", _ast.PyCF_ONLY_AST, _feature_version=feature[1])

    def where(data, index):
        start = data.rfind(b"\\n", 0, index) + 1
        return data.count(b"\\n", 0, index) + 1, len(data[start:index].decode("utf-8", "replace")) + 1

    def check(name, data):
        # Most files compile: parsed from the bytes, as compile() decodes them (PEP 263, as the import system does).
        # Only a file that fails is looked at again, step by step, for the words and the place python's import gives.
        try:
            parse(data, name)
            return None
        except Exception:
            pass
        import io, tokenize
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as e:
            return {"type": "SyntaxError", "message": str(e), "line": 1}
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as e:
            line, column = where(data, e.start)
            if encoding == "utf-8":
                message = "Non-UTF-8 code starting with %s in file %s on line %d, but no encoding declared; " \\
                    "see https://peps.python.org/pep-0263/ for details" % (repr(data[e.start:e.start + 1])[1:], name, line)
            else:
                message = "(unicode error) %s" % e
            return {"type": "SyntaxError", "message": message, "line": line, "column": column}
        if "\\0" in text:
            line, column = where(data, data.index(b"\\0"))
            return {"type": "SyntaxError", "message": "source code cannot contain null bytes", "line": line, "column": column}
        try:
            parse(text, name)
        except SyntaxError as e:
            fault = {"type": type(e).__name__, "message": e.msg}
            if e.lineno:
                fault["line"] = e.lineno
                if e.offset and e.offset > 0:
                    fault["column"] = e.offset
            return fault
        except (RecursionError, MemoryError) as e:
            return {"type": type(e).__name__, "message": str(e) or "too deeply nested to parse"}
        return None

    # A source that compiled once compiles again: repositories made from a template hold thousands of copies of one
    # model.py, each parsed once. A faulty source is parsed again: its message may name the file.
    valid = set()
    faults = {}
    count = 0
    for name, data in sources:
        if data not in valid:
            fault = check(name, data)
            if fault is None:
                valid.add(data)
            else:
                faults[count] = fault
        count += 1
    return {"executable": sys.executable, "version": "%d.%d" % sys.version_info[:2], "count": count, "faults": faults}
`;

/**
 * The checker, which needs only the standard library: `-I` keeps PYTHONPATH and the user's site-packages out, `-S`
 * the `site` module: no site-packages scanned, no `.pth` file's code run (it could print into the answer), and two
 * thirds of the start-up saved (a pyenv python 3.11 on a loaded machine: 0.14 s of CPU with site, 0.05 s without).
 * The request on stdin: a line `<major> <minor>`, then each file as a line `<name bytes> <source bytes>` followed by
 * the name and the source, raw (no JSON or base64 to decode per file). The answer is JSON, written without the json
 * module, whose import (its regular expressions compiled) took 15 ms of CPU of a 36 ms start (pyenv python 3.11, perf
 * stat over 30 starts). With ast and tokenize not imported either (SYNTAX_VERDICTS), a check of one file costs ~30 ms
 * of CPU, 55 ms before, against 23-25 ms for a bare start (bench/python-syntax-start.js).
 */
const CHECKER = `
import sys
${SYNTAX_VERDICTS}
stdin = sys.stdin.buffer
feature = [int(part) for part in stdin.readline().split()]


def sources():
    while True:
        header = stdin.readline()
        if not header:
            return
        name_size, size = map(int, header.split())
        yield stdin.read(name_size).decode("utf-8", "replace"), stdin.read(size)


def text(value):
    # JSON for the answer's few strings and numbers, ASCII only as json.dumps writes it by default.
    if isinstance(value, int):
        return str(value)
    out = []
    for ch in value:
        code = ord(ch)
        if ch == '"' or ch == "\\\\":
            out.append("\\\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code < 0x10000:
            out.append("\\\\u%04x" % code)
        else:
            code -= 0x10000
            out.append("\\\\u%04x\\\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)))
    return '"' + "".join(out) + '"'


def dump(value):
    if isinstance(value, dict):
        return "{" + ",".join(text(str(key)) + ":" + dump(item) for key, item in value.items()) + "}"
    return text(value)


sys.stdout.write(dump(syntax_verdicts(feature, sources())))
`;

/**
 * Checks every source in one python process. Never throws for what a source holds, nor for a missing or broken
 * interpreter (`ran: false`); only a cancellation rejects (MmeError ABORTED).
 */
export async function checkPythonSyntax(jobs: readonly SyntaxJob[], options: SyntaxCheckOptions): Promise<SyntaxCheckResult> {
  const session = startSyntaxCheck(options);
  for (const job of jobs) session.add(job);
  return session.finish();
}

/** A syntax check fed one source at a time: python parses each while the caller goes on with its own work. */
export interface SyntaxSession {
  /** Sends one source (python starts with the first). */
  add(job: SyntaxJob): void;
  /** Ends the request; the verdicts, one per source added, in order. Rejects only when cancelled (MmeError ABORTED). */
  finish(): Promise<SyntaxCheckResult>;
  /** Stops the check (the caller failed): its python process is killed, nothing is answered. */
  cancel(): void;
}

/** The whole check's time limit when none is given. */
const DEFAULT_TIMEOUT_MS = 60_000;

/** Sources are sent in batches of about this many bytes: one pipe write per batch, not per file. */
const BATCH_BYTES = 16 * 1024;

/**
 * Sources a python found valid in this process, by interpreter and feature version: one that compiled once compiles
 * again (its bytes decide; a file's name only shapes a fault's message, and a faulty source is always sent again). A
 * program that validates more than once (the library's validateRepository; a test file of this suite) starts python
 * only for the sources it has not seen. Kept for checks of up to REMEMBERED_CHECK_SIZE sources: hashing
 * ten thousand model.py files costs a one-shot CLI more than it could gain.
 */
const validSources = new Map<string, { readonly version: string; readonly keys: Set<string> }>();
const REMEMBERED_CHECK_SIZE = 256;
/** At most this many sources are remembered per interpreter: past it, the memory starts again empty. */
const REMEMBERED_SOURCES = 10_000;

/** validSources' key of an interpreter (its own path, sys.executable) and a target's `feature`. */
function interpreterKey(executable: string, feature: readonly number[]): string {
  return `${executable}\n${feature.join('.')}`;
}

function sourceKey(source: Buffer): string {
  return createHash('sha256').update(source).digest('base64');
}

/**
 * Starts a syntax check that receives its sources as they are found: on a repository of ten thousand python models the
 * python process (its start-up included, a second for a pyenv shim) works on the other core while the caller reads and
 * checks the models, instead of after it (bench/validate.js, issue 23 item 8). The caller lets the event loop run now
 * and then, so that what the pipe could not take at once is sent. A source this process already found valid with the
 * same interpreter is not sent (validSources); when every one was, python does not start.
 */
export function startSyntaxCheck(options: SyntaxCheckOptions): SyntaxSession {
  if (options.runner) return runnerCheck(options.runner, options);
  const env = options.env ?? process.env;
  const python = pythonName(options.python, env);
  // The interpreter itself when an earlier run learnt it: `python3` is often a shim that takes a second to start.
  const executable = knownInterpreter(python, env);
  const feature = featureOf(options.pythonVersion);
  const known = executable === undefined ? undefined : validSources.get(interpreterKey(executable, feature));
  const jobs: SyntaxJob[] = [];
  /** The index in `jobs` of each source sent, in the order python answers them. */
  const sent: number[] = [];
  /** Each sent source's validSources key, while the check is small enough to remember. */
  const keys: string[] = [];
  let child: StartedPython | undefined;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const start = () => {
    child = startPython(executable ?? python, ['-I', '-S', '-B', '-c', CHECKER], {
      env,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      stderrLimit: 16 * 1024,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    child.write(`${feature.join(' ')}\n`);
    return child;
  };
  const flush = () => {
    if (pending.length === 0) return;
    (child ?? start()).write(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  return {
    add(job) {
      jobs.push(job);
      if (jobs.length <= REMEMBERED_CHECK_SIZE) {
        const key = sourceKey(job.source);
        if (known?.keys.has(key)) return;
        keys.push(key);
      }
      sent.push(jobs.length - 1);
      const name = Buffer.from(job.name);
      const header = Buffer.from(`${name.length} ${job.source.length}\n`);
      pending.push(header, name, job.source);
      pendingBytes += header.length + name.length + job.source.length;
      if (pendingBytes >= BATCH_BYTES || child === undefined) flush();
    },
    async finish() {
      if (sent.length === 0 && known !== undefined && executable !== undefined) {
        return { ran: true, executable, version: known.version, faults: new Array<undefined>(jobs.length).fill(undefined) };
      }
      flush();
      const answer = answerOf(await (child ?? start()).end(), python, sent.length, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      if (answer.ran) rememberInterpreter(python, env, answer.executable);
      else {
        if (executable === undefined) return answer;
        // What an earlier run found is gone: ask for the name again, for every source.
        rememberInterpreter(python, env, undefined);
        return checkPythonSyntax(jobs, options);
      }
      const faults = new Array<SyntaxFault | undefined>(jobs.length).fill(undefined);
      sent.forEach((job, i) => (faults[job] = answer.faults[i]));
      if (jobs.length <= REMEMBERED_CHECK_SIZE) remember(answer.executable, feature, answer.version, keys, answer.faults);
      return { ...answer, faults };
    },
    cancel() {
      child?.kill();
    },
  };
}

/** Adds the sources that compiled (no fault) to validSources. */
function remember(
  executable: string,
  feature: readonly number[],
  version: string,
  keys: readonly string[],
  faults: readonly (SyntaxFault | undefined)[],
): void {
  const id = interpreterKey(executable, feature);
  let entry = validSources.get(id);
  if (entry?.version !== version || entry.keys.size > REMEMBERED_SOURCES) {
    validSources.set(id, (entry = { version, keys: new Set() }));
  }
  keys.forEach((key, i) => {
    if (!faults[i]) entry.keys.add(key);
  });
}

/** The checker's `feature`: `[major, minor]` of a `major.minor` version. */
function featureOf(version: string): number[] {
  return version.split('.').map(Number).slice(0, 2);
}

/** The check run by `runner`, in one request at finish; a python of the check's own when the runner cannot. */
function runnerCheck(runner: SyntaxRunner, options: SyntaxCheckOptions): SyntaxSession {
  const jobs: SyntaxJob[] = [];
  const { runner: _, ...own } = options;
  return {
    add: (job) => void jobs.push(job),
    async finish() {
      const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const feature = featureOf(options.pythonVersion);
      const files = jobs.map((job) => [job.name, job.source.toString('base64')]);
      const run = await runner.run(JSON.stringify({ syntax_check: { feature, files } }), timeoutMs, options.signal);
      return run ? answerOf(run, runner.python, jobs.length, timeoutMs) : checkPythonSyntax(jobs, own);
    },
    cancel: () => undefined, // nothing runs before finish
  };
}

/** The check's verdicts from the child's outcome (throws MmeError ABORTED when it was cancelled). */
function answerOf(run: PythonRun, python: string, count: number, timeoutMs: number): SyntaxCheckResult {
  if (run.kind === 'spawn-error') {
    const err = run.error;
    if (err.name === 'AbortError') throw new MmeError('ABORTED', 'The python syntax check was cancelled.', { cause: err });
    if (err.code === 'ENOENT') return { ran: false, python, missing: true, reason: 'not found' };
    return { ran: false, python, missing: false, reason: `could not be started (${err.message})` };
  }
  if (run.kind === 'timeout') {
    return { ran: false, python, missing: false, reason: `did not finish within ${Math.round(timeoutMs / 1000)} s` };
  }
  try {
    const answer = JSON.parse(run.stdout.toString('utf8')) as {
      too_old?: string;
      executable: string;
      version: string;
      count: number;
      faults: Record<string, SyntaxFault>;
    };
    if (answer.too_old !== undefined) {
      return { ran: false, python, missing: false, reason: `is Python ${answer.too_old}; the check needs 3.8 or later` };
    }
    if (answer.count !== count) throw new Error('one answer per file expected');
    const faults: (SyntaxFault | undefined)[] = new Array<SyntaxFault | undefined>(count).fill(undefined);
    for (const [index, fault] of Object.entries(answer.faults)) faults[Number(index)] = fault;
    return { ran: true, executable: answer.executable, version: answer.version, faults };
  } catch {
    const tail = run.stderr.trim().split('\n').slice(-2).join(' ').slice(0, 300);
    return { ran: false, python, missing: false, reason: `exited ${run.exit}${tail ? `: ${tail}` : ''}` };
  }
}
