// Human and JSON renderings of a validation report, shared by `validate` and `package`.

import { countSummary, Diagnostic, formatDiagnostic } from '../diagnostics';
import type { ValidationReport } from '../repository/validate';
import { escapeExcerpt, escapeLine } from './terminal-text';

export interface ReportJson {
  readonly ok: boolean;
  readonly models: { name: string; path: string; platform: string | null; backend: string | null; versions: number[] }[];
  readonly diagnostics: Omit<Diagnostic, 'excerpt'>[];
}

/** The report as the documented JSON object (models without their parsed configs). */
export function reportToJson(report: ValidationReport): ReportJson {
  return {
    ok: report.ok,
    models: report.models.map((m) => ({
      name: m.name,
      path: m.path,
      platform: m.platform ?? null,
      backend: m.backend ?? null,
      versions: m.versions,
    })),
    diagnostics: report.diagnostics.map(({ excerpt: _excerpt, ...d }) => d),
  };
}

/** Errors of an ensemble that only say a composing model failed (lib/repository/ensemble-graph.ts). */
const ECHO_CODES: ReadonlySet<string> = new Set(['ensemble-invalid-model', 'ensemble-model-no-version']);

/** Diagnostics grouped by model, each with file:line:col and its caret excerpt, then a one-line summary. */
export function formatReport(report: ValidationReport, target: string): string {
  const lines: string[] = [];
  const byModel = new Map<string, typeof report.diagnostics>();
  for (const d of report.diagnostics) {
    const key = d.model ?? '';
    byModel.set(key, [...(byModel.get(key) ?? []), d]);
  }
  // Root causes first: a model whose every error only repeats a composing model's failure comes after the models
  // whose own errors explain it, so the first error on the screen is the one to fix.
  const echoOnly = (key: string) => {
    const errors = (byModel.get(key) ?? []).filter((d) => d.severity === 'error');
    return errors.length > 0 && errors.every((d) => ECHO_CODES.has(d.code));
  };
  const order = [...new Set(['', ...report.models.map((m) => m.name), ...byModel.keys()])];
  for (const key of [...order.filter((k) => !echoOnly(k)), ...order.filter(echoOnly)]) {
    const list = byModel.get(key);
    if (!list) continue;
    lines.push(`${escapeLine(key || target)}:`);
    for (const d of list) lines.push(formatDiagnosticText({ ...d, file: asGiven(target, d.file) }, { prefix: '  ' }));
  }
  const models = report.models.length;
  const verdict = report.ok ? 'valid' : 'invalid';
  lines.push(`${escapeLine(target)}: ${verdict} (${models} model${models === 1 ? '' : 's'}; ${countSummary(report.diagnostics)})`);
  return lines.join('\n') + '\n';
}

/**
 * A diagnostic's file (relative to the path the user gave) as a path from where the user is, spelled from what they
 * typed: `./ensemble_hf` and `bert-trt/config.pbtxt` give `./ensemble_hf/bert-trt/config.pbtxt`, which a terminal
 * or editor opens with its line and column. An archive's entries stay as they are: they are no path on disk.
 */
export function asGiven(given: string, file: string): string {
  if (/\.(tar\.gz|tgz)$/i.test(given)) return file;
  const base = given.length > 1 ? given.replace(/[\\/]+$/, '') || given : given;
  if (file === '.' || file === '') return base;
  return base.endsWith('/') ? `${base}${file}` : `${base}/${file}`;
}

/**
 * One diagnostic for a terminal: formatDiagnostic with its file, message and caret excerpt escaped (a config line can
 * hold control characters, a file name a newline), the caret kept under its column.
 */
export function formatDiagnosticText(d: Diagnostic, options: { prefix?: string } = {}): string {
  const safe: Diagnostic = {
    ...d,
    file: escapeLine(d.file),
    message: escapeLine(d.message),
    ...(d.model !== undefined ? { model: escapeLine(d.model) } : {}),
    ...(d.excerpt !== undefined ? { excerpt: escapeExcerpt(d.excerpt) } : {}),
  };
  return formatDiagnostic(safe, options);
}
