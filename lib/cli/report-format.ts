// Human and JSON renderings of a validation report, shared by `validate` and `package`.

import { Diagnostic, formatDiagnostic, type Note } from '../diagnostics';
import type { ValidationReport } from '../repository/validate';
import { escapeExcerpt, escapeLine } from './terminal-text';
import { countedWarnings, isAccepted, passes, type Verdict } from './verdict';

export interface ReportJson {
  readonly ok: boolean;
  readonly models: { name: string; path: string; platform: string | null; backend: string | null; versions: number[] }[];
  /** Each warning the user accepted (`--accept`) carries `accepted: true`. */
  readonly diagnostics: (Omit<Diagnostic, 'excerpt'> & { accepted?: true })[];
  /** Present when there is one: checks that could not run here. */
  readonly notes?: readonly Note[];
}

/**
 * The report as the documented JSON object (models without their parsed configs); `ok` is the verdict after `--accept`
 * and `--strict`.
 */
export function reportToJson(report: ValidationReport, verdict?: Verdict): ReportJson {
  return {
    ok: passes(report, verdict),
    models: report.models.map((m) => ({
      name: m.name,
      path: m.path,
      platform: m.platform ?? null,
      backend: m.backend ?? null,
      versions: m.versions,
    })),
    diagnostics: report.diagnostics.map(({ excerpt: _excerpt, ...d }) => (isAccepted(d, verdict) ? { ...d, accepted: true } : d)),
    ...(report.notes?.length ? { notes: report.notes } : {}),
  };
}

/** Errors of an ensemble that only say a composing model failed (lib/repository/ensemble-graph.ts). */
const ECHO_CODES: ReadonlySet<string> = new Set(['ensemble-invalid-model', 'ensemble-model-no-version']);

/**
 * Diagnostics grouped by model, each with file:line:col and its caret excerpt, then the notes and a one-line summary.
 * Accepted warnings are summed up in one line, not listed.
 */
export function formatReport(report: ValidationReport, target: string, verdict?: Verdict): string {
  const lines: string[] = [];
  const byModel = new Map<string, typeof report.diagnostics>();
  for (const d of report.diagnostics) {
    if (isAccepted(d, verdict)) continue;
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
  const accepted = acceptedLine(report, verdict);
  if (accepted) lines.push(accepted);
  for (const note of report.notes ?? []) lines.push(`note [${note.code}] ${escapeLine(note.message)}`);
  const models = report.models.length;
  const strictFailure = report.ok && !passes(report, verdict);
  const word = passes(report, verdict) ? 'valid' : strictFailure ? 'invalid under --strict' : 'invalid';
  const fix = strictFailure ? ': fix the warnings, or acknowledge them with --accept CODE' : '';
  lines.push(`${escapeLine(target)}: ${word} (${models} model${models === 1 ? '' : 's'}; ${summary(report, verdict)})${fix}`);
  return lines.join('\n') + '\n';
}

/** "2 errors, 1 warning", with ", 3 accepted" when warnings were accepted. */
export function summary(report: ValidationReport, verdict?: Verdict): string {
  const errors = report.diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = countedWarnings(report, verdict).length;
  const accepted = report.diagnostics.filter((d) => isAccepted(d, verdict)).length;
  return `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}` +
    (accepted > 0 ? `, ${accepted} accepted` : '');
}

/** `accepted: 3 warnings (tensorrt-plan-target x2, mme-unused-model)`, or undefined when none was accepted. */
function acceptedLine(report: ValidationReport, verdict: Verdict | undefined): string | undefined {
  const byCode = new Map<string, number>();
  for (const d of report.diagnostics) if (isAccepted(d, verdict)) byCode.set(d.code, (byCode.get(d.code) ?? 0) + 1);
  if (byCode.size === 0) return undefined;
  const total = [...byCode.values()].reduce((a, b) => a + b, 0);
  const codes = [...byCode].map(([code, n]) => (n > 1 ? `${code} x${n}` : code)).join(', ');
  return `accepted: ${total} warning${total === 1 ? '' : 's'} (${codes}), acknowledged with --accept`;
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
