// Python models' sources must compile with the Python of the target's Triton image: the python backend's stub imports
// model.py as a module (python_backend @ f9088ff src/pb_stub.cc:2068), so a file that does not compile fails the load
// whatever it does. Checked with the local python3's parser, never run; loaded only for repositories with python models.

import { join } from 'node:path';
import { compareVersions, tritonPythonVersion } from '../catalog/triton-releases';
import { diagnostic, type Diagnostic, type Note, type SourcePosition } from '../diagnostics';
import { startSyntaxCheck, type SyntaxFault, type SyntaxRunner } from '../python-auto-complete/syntax-check';
import { relPath, type LoadedModel } from './model';

export interface PythonSyntaxOptions {
  /** The Triton release whose image's Python the sources must be valid for (`YY.MM`). */
  readonly tritonVersion: string;
  /** The interpreter. @default MME_DEPLOY_PYTHON, else `python3` */
  readonly python?: string;
  /** Where the interpreter is looked for (PATH, MME_DEPLOY_PYTHON). @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
  /** A python already running that checks instead (syntax-check.ts SyntaxRunner). */
  readonly runner?: SyntaxRunner;
}

export interface PythonSyntaxOutcome {
  readonly diagnostics: Diagnostic[];
  readonly notes: Note[];
  /** Models with a source that does not compile: importing it (`--run-python`) would only fail the same way. */
  readonly failed: ReadonlySet<string>;
  /** The interpreter's own path, when it ran. */
  readonly executable?: string;
}

interface Subject {
  readonly model: LoadedModel;
  /** Relative to the path given, as diagnostics name files. */
  readonly file: string;
  readonly path: string;
}

/** The python file of every version Triton loads, for each python model; no python process when there is none. */
export async function checkPythonModelsSyntax(models: readonly LoadedModel[], options: PythonSyntaxOptions): Promise<PythonSyntaxOutcome> {
  const session = startPythonModelsSyntax(options);
  for (const model of models) session.add(model);
  return session.finish();
}

/** The check fed one model at a time, as discovery loads them: python works meanwhile (see startSyntaxCheck). */
export interface PythonSyntaxSession {
  /** Sends the model's python files, when it is a python model (python starts with the first file). */
  add(model: LoadedModel): void;
  finish(): Promise<PythonSyntaxOutcome>;
  /** Stops the check (discovery failed): its python process is killed. */
  cancel(): void;
}

export function startPythonModelsSyntax(options: PythonSyntaxOptions): PythonSyntaxSession {
  const target = tritonPythonVersion(options.tritonVersion);
  const check = startSyntaxCheck({
    pythonVersion: target,
    ...(options.python ? { python: options.python } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.runner ? { runner: options.runner } : {}),
  });
  const subjects: Subject[] = [];
  return {
    add(model) {
      for (const subject of pythonSources(model)) {
        // The bytes are read once: the python rules decode the same ones (python decodes them itself, as its import
        // system does). Undefined: not a regular file, or unreadable, which the files view reports.
        const source = model.files.readBytes(subject.path);
        if (source === undefined) continue;
        subjects.push(subject);
        check.add({ name: subject.file, source });
      }
    },
    async finish() {
      if (subjects.length === 0) return { diagnostics: [], notes: [], failed: new Set() };
      const result = await check.finish();
      if (!result.ran) {
        const files = `${subjects.length} python model file${subjects.length === 1 ? '' : 's'}`;
        const message = result.missing
          ? `${result.python} was not found, so the syntax of ${files} was not checked. Install python3 (3.8 or later, ` +
            `ideally ${target}, the Python of Triton ${options.tritonVersion}'s image), or name one with ` +
            'MME_DEPLOY_PYTHON; --no-python-syntax turns the check off.'
          : `${result.python} ${result.reason}, so the syntax of ${files} was not checked. Point MME_DEPLOY_PYTHON at a ` +
            'python3 of 3.8 or later; --no-python-syntax turns the check off.';
        return { diagnostics: [], notes: [{ code: 'python-syntax-skipped', message }], failed: new Set() };
      }
      const diagnostics: Diagnostic[] = [];
      const failed = new Set<string>();
      result.faults.forEach((fault, i) => {
        if (!fault) return;
        const subject = subjects[i]!;
        failed.add(subject.model.name);
        diagnostics.push(syntaxDiagnostic(subject, fault, { target, tritonVersion: options.tritonVersion, local: result.version }));
      });
      return { diagnostics, notes: [], failed, executable: result.executable };
    },
    cancel: () => check.cancel(),
  };
}

function pythonSources(model: LoadedModel): Subject[] {
  if (model.backend !== 'python' || !model.parsed) return [];
  const fileName = model.defaultModelFilename ?? 'model.py';
  if (!fileName.endsWith('.py')) return []; // python-model-extension says so
  const dirNames = new Map(model.versionDirs.map((v) => [v.version, v.dirName]));
  return model.versions.flatMap((version) => {
    const dirName = dirNames.get(version);
    if (dirName === undefined) return [];
    return [{ model, file: relPath(model.relDir, dirName, fileName), path: join(model.dir, dirName, fileName) }];
  });
}

function syntaxDiagnostic(
  subject: Subject,
  fault: SyntaxFault,
  python: { target: string; tritonVersion: string; local: string },
): Diagnostic {
  const { model, file, path } = subject;
  const text = model.files.readText(path);
  const source = { file, model: model.name, ...(text !== undefined ? { text } : {}) };
  // The local parser knows no syntax newer than itself: what it refuses may be valid for a newer target.
  const older =
    compareVersions(python.local, python.target) < 0
      ? ` (checked with the local Python ${python.local}, older than ${python.target}: if this is newer syntax, point ` +
        `MME_DEPLOY_PYTHON at a Python ${python.target}, or pass --no-python-syntax)`
      : '';
  return diagnostic(
    'error',
    'python-syntax',
    `${file} does not compile with Python ${python.target}, the Python of Triton ${python.tritonVersion}'s image ` +
      `(${fault.type}: ${fault.message}): the python backend fails the load importing it${older}.`,
    source,
    text !== undefined && fault.line !== undefined ? position(text, fault.line, fault.column ?? 1) : undefined,
  );
}

/** The place of 1-based `line` and `column` (in characters, as python counts them) in `text`. */
function position(text: string, line: number, column: number): SourcePosition | undefined {
  let start = 0;
  for (let l = 1; l < line; l++) {
    start = text.indexOf('\n', start) + 1;
    if (start === 0) return undefined;
  }
  let end = text.indexOf('\n', start);
  if (end < 0) end = text.length;
  // Code points to UTF-16 units; a column past the end of the line (python's "at end of line") stays on the line.
  const chars = [...text.slice(start, end)];
  const before = chars.slice(0, Math.max(0, column - 1)).join('');
  const clamped = Math.min(column, chars.length + 1);
  return { line, column: clamped, offset: start + before.length };
}
