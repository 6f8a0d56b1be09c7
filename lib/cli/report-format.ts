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

/** Diagnostics grouped by model, each with file:line:col and its caret excerpt, then a one-line summary. */
export function formatReport(report: ValidationReport, target: string): string {
  const lines: string[] = [];
  const byModel = new Map<string, typeof report.diagnostics>();
  for (const d of report.diagnostics) {
    const key = d.model ?? '';
    byModel.set(key, [...(byModel.get(key) ?? []), d]);
  }
  const order = ['', ...report.models.map((m) => m.name)];
  for (const key of [...new Set([...order, ...byModel.keys()])]) {
    const list = byModel.get(key);
    if (!list) continue;
    lines.push(`${escapeLine(key || target)}:`);
    for (const d of list) lines.push(formatDiagnosticText(d, { prefix: '  ' }));
  }
  const models = report.models.length;
  const verdict = report.ok ? 'valid' : 'invalid';
  lines.push(`${escapeLine(target)}: ${verdict} (${models} model${models === 1 ? '' : 's'}; ${countSummary(report.diagnostics)})`);
  return lines.join('\n') + '\n';
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
