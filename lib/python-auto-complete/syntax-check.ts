// Compiles python models' sources to a syntax tree, never running them: one python3 process for every file of a run,
// the files sent on stdin as JSON. `ast.parse` with `feature_version` refuses syntax newer than the target image's
// Python (`except*` for 3.10), as that Python would when the stub imports model.py.
//
// The bytes are decoded as the import system decodes a source file (PEP 263: a BOM or a coding cookie, else UTF-8;
// tokenize.detect_encoding), so a Latin-1 file that declares itself compiles, and one that does not is refused with
// the words python's import uses ("Non-UTF-8 code starting with ...").

import { runPython } from './spawn-python';
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
}

/** The checker; `-I` keeps PYTHONPATH and the user's site-packages out: it needs only the standard library. */
const CHECKER = `
import ast, base64, io, json, sys, tokenize, warnings
warnings.simplefilter("ignore")
if sys.version_info < (3, 8):
    json.dump({"too_old": "%d.%d" % sys.version_info[:2]}, sys.stdout)
    sys.exit(0)
request = json.load(sys.stdin)
feature = tuple(request["feature"])
# ast.parse knows no feature_version below (3, 7) in recent pythons.
feature = max(feature, (3, 7))

def where(data, index):
    start = data.rfind(b"\\n", 0, index) + 1
    return data.count(b"\\n", 0, index) + 1, len(data[start:index].decode("utf-8", "replace")) + 1

def check(name, data):
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
        ast.parse(text, name, feature_version=feature)
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

faults = [check(f["name"], base64.b64decode(f["source"])) for f in request["files"]]
json.dump({"executable": sys.executable, "version": "%d.%d" % sys.version_info[:2], "faults": faults}, sys.stdout)
`;

/**
 * Checks every source in one python process. Never throws for what a source holds, nor for a missing or broken
 * interpreter (`ran: false`); only a cancellation rejects (MmeError ABORTED).
 */
export async function checkPythonSyntax(jobs: readonly SyntaxJob[], options: SyntaxCheckOptions): Promise<SyntaxCheckResult> {
  const env = options.env ?? process.env;
  const python = pythonName(options.python, env);
  // The interpreter itself when an earlier run learnt it: `python3` is often a shim that takes a second to start.
  const executable = knownInterpreter(python, env);
  const result = await runChecker(executable ?? python, python, jobs, options, env);
  if (result.ran) rememberInterpreter(python, env, result.executable);
  else if (executable !== undefined) {
    // What an earlier run found is gone: ask for the name again.
    rememberInterpreter(python, env, undefined);
    return checkPythonSyntax(jobs, options);
  }
  return result;
}

async function runChecker(
  command: string,
  python: string,
  jobs: readonly SyntaxJob[],
  options: SyntaxCheckOptions,
  env: NodeJS.ProcessEnv,
): Promise<SyntaxCheckResult> {
  const [major, minor] = options.pythonVersion.split('.').map(Number);
  const request = JSON.stringify({
    feature: [major, minor],
    files: jobs.map((job) => ({ name: job.name, source: job.source.toString('base64') })),
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  const run = await runPython(command, ['-I', '-B', '-c', CHECKER], {
    env,
    input: request,
    timeoutMs,
    stderrLimit: 16 * 1024,
    ...(options.signal ? { signal: options.signal } : {}),
  });
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
      faults: (SyntaxFault | null)[];
    };
    if (answer.too_old !== undefined) {
      return { ran: false, python, missing: false, reason: `is Python ${answer.too_old}; the check needs 3.8 or later` };
    }
    if (answer.faults.length !== jobs.length) throw new Error('one answer per file expected');
    return { ran: true, executable: answer.executable, version: answer.version, faults: answer.faults.map((f) => f ?? undefined) };
  } catch {
    const tail = run.stderr.trim().split('\n').slice(-2).join(' ').slice(0, 300);
    return { ran: false, python, missing: false, reason: `exited ${run.exit}${tail ? `: ${tail}` : ''}` };
  }
}
