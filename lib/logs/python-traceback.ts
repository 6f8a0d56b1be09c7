// Splits a python error as the python backend reports it into the exception line and its frames.
//
// Two shapes reach the log:
// - pybind11's error_already_set::what(), which the stub passes on (python_backend src/pb_stub.cc:309-314, 372-379,
//   731-733): `ModuleNotFoundError: No module named 'x'\n\nAt:\n  /path/model.py(3): <module>\n  ...`, innermost
//   frame first, one `  <file>(<line>): <function>` per frame (pybind11 include/pybind11/detail/error_string.h).
// - CPython's own traceback, printed by the model's code or by the stub's asyncio callback (pb_stub.cc:964-972):
//   `Traceback (most recent call last):\n  File "/path/model.py", line 3, in <module>\n    import x\nXError: ...`.

export interface PythonError {
  /** `ModuleNotFoundError: No module named 'transformers'` (what precedes the frames, on one line). */
  readonly exception: string;
  /** The frames, trimmed; empty when the text holds none. */
  readonly frames: readonly string[];
}

// The blank line before "At:" is lost where a log shipper drops empty lines, so it is optional.
const PYBIND_FRAMES = /\n\s*At:\n/;
const CPYTHON_HEADER = 'Traceback (most recent call last):';

/** The exception and frames of a python error, or undefined when `text` holds no traceback. */
export function splitPythonError(text: string): PythonError | undefined {
  const at = PYBIND_FRAMES.exec(text);
  if (at) {
    return {
      exception: text.slice(0, at.index).trim(),
      frames: text
        .slice(at.index + at[0].length)
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.length > 0),
    };
  }
  const tb = text.indexOf(CPYTHON_HEADER);
  if (tb >= 0) {
    const lines = text.slice(tb + CPYTHON_HEADER.length).split('\n');
    const frames: string[] = [];
    let exception = '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      if (/^\s+File "/.test(line)) frames.push(line.trim());
      else if (/^\s/.test(line) && frames.length > 0) frames[frames.length - 1] += ` | ${line.trim()}`;
      else exception = line.trim();
    }
    const before = text.slice(0, tb).trim();
    return { exception: exception || before, frames };
  }
  return undefined;
}

/**
 * The name of the python exception class in `exception` (`ModuleNotFoundError`), at its start or after a prefix
 * such as Triton's `Internal: `, if there is one.
 */
export function exceptionType(exception: string): string | undefined {
  return /(?:^|: )([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))(?::|$)/m.exec(exception)?.[1];
}

/**
 * Where a frame or path points inside an extracted archive: `/opt/ml/models/<hash>/model/<dir>/...` (the archive
 * holds model directories) or `/opt/ml/models/<hash>/model/<version>/...` (the archive root is the model itself).
 * SageMaker extracts every TargetModel there (triton-inference-server/server:src/sagemaker_server.cc:1040-1066).
 */
export function archivePathOf(text: string): { hash: string; modelDir?: string } | undefined {
  // A model directory is followed by more path; a file right under model/ belongs to the root model.
  const m = /\/opt\/ml\/models\/([^/\s'"()]+)\/model(?:\/([^/\s'"()]+)(?=\/))?/.exec(text);
  if (!m) return undefined;
  const dir = m[2];
  return dir === undefined || /^\d+$/.test(dir) ? { hash: m[1]! } : { hash: m[1]!, modelDir: dir };
}
