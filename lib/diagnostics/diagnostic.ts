// Diagnostics are data: every check in the library returns them instead of printing or throwing. This module is the
// bottom of the house: config/, repository/ and archive/ all stand on it, and it imports nothing of theirs.

import { caretExcerpt } from './excerpt';

export type Severity = 'error' | 'warning';

/** A place in a text file: 1-based line and column (in characters) and the 0-based offset. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

/** The file a diagnostic is about: its path as shown, the model it belongs to, and its text when it has one. */
export interface DiagnosticSource {
  /** Path relative to the path the user gave, with `/` separators. */
  readonly file: string;
  /** The model (directory name) the file belongs to. */
  readonly model?: string;
  /** The file's text, for the caret excerpt. */
  readonly text?: string;
}

export interface Diagnostic {
  readonly severity: Severity;
  /** Stable kebab-case identifier, e.g. `unknown-field`, `ensemble-cycle`. */
  readonly code: string;
  /** A sentence: what is wrong, where, and how to fix it (with Triton's own wording where Triton has one). */
  readonly message: string;
  /** Path relative to the path the user gave, with `/` separators. */
  readonly file: string;
  /** 1-based line, when the fault has a place in a text file. */
  readonly line?: number;
  /** 1-based column (in characters), when `line` is set. */
  readonly column?: number;
  /** The model (directory name) the fault belongs to. */
  readonly model?: string;
  /** A caret excerpt of the offending line, for human output (never in `--json` unless present). */
  readonly excerpt?: string;
}

/**
 * Something the user should know that is no fault of the models and never changes the verdict: a check that could
 * not run here (no python3 for the model.py syntax check), with what would let it run.
 */
export interface Note {
  /** Stable kebab-case identifier, e.g. `python-syntax-skipped`. */
  readonly code: string;
  readonly message: string;
}

/**
 * The one way diagnostics are built: `at` gives line and column, and with the source's text a caret excerpt is always
 * added, so every rule's faults look alike.
 */
export function diagnostic(
  severity: Severity,
  code: string,
  message: string,
  source: DiagnosticSource,
  at?: SourcePosition,
): Diagnostic {
  return {
    severity,
    code,
    message,
    file: source.file,
    ...(at ? { line: at.line, column: at.column } : {}),
    ...(source.model !== undefined ? { model: source.model } : {}),
    ...(at && source.text !== undefined ? { excerpt: caretExcerpt(source.text, at.offset, at.column) } : {}),
  };
}

/** The same fault as a warning, `why` appended: for an error that cannot fail where the finding is used. */
export function asWarning(d: Diagnostic, why: string): Diagnostic {
  return { ...d, severity: 'warning', message: d.message + why };
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** Orders diagnostics by file, line, column, then code, so output is stable. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) =>
      compare(a.file, b.file) ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0) ||
      compare(a.code, b.code) ||
      compare(a.message, b.message),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `file:line:col` (or just `file`) for a diagnostic. */
export function diagnosticLocation(d: Diagnostic): string {
  return d.line !== undefined ? `${d.file}:${d.line}:${d.column ?? 1}` : d.file;
}

/** One diagnostic as text: `file:line:col: error [code] message`, then the caret excerpt when there is one. */
export function formatDiagnostic(d: Diagnostic, options: { excerpt?: boolean; prefix?: string } = {}): string {
  const prefix = options.prefix ?? '';
  let text = `${prefix}${diagnosticLocation(d)}: ${d.severity} [${d.code}] ${d.message}`;
  if (options.excerpt !== false && d.excerpt) {
    text += '\n' + d.excerpt.split('\n').map((l) => `${prefix}    ${l}`).join('\n');
  }
  return text;
}

/** "2 errors, 1 warning" */
export function countSummary(diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  return `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
}
