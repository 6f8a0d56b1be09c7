// What a validation report means for the exit code once the user's `--accept` codes and `--strict` are applied, for
// `validate` and `package`. Pure: the report is never changed, the accepted warnings are only marked.

import type { Diagnostic } from '../diagnostics';
import type { ValidationReport } from '../repository/validate';
import { UsageError } from './io';
import type { VerdictFlags } from './target-options';

export interface Verdict {
  /** The warning codes acknowledged. */
  readonly accepted: ReadonlySet<string>;
  readonly strict: boolean;
}

/** The verdict the flags ask for; an unknown code or an error code is a usage error naming it. */
export async function verdictOf(flags: VerdictFlags): Promise<Verdict> {
  const codes = (flags.accept ?? []).flatMap((value) => value.split(',')).map((code) => code.trim());
  if (codes.length > 0) {
    const { unacceptableCode } = await import('../repository/diagnostic-codes');
    for (const code of codes) {
      if (code === '') throw new UsageError('--accept needs a warning code, e.g. --accept tensorrt-plan-target.');
      const problem = unacceptableCode(code);
      if (problem) throw new UsageError(`--accept ${problem}`);
    }
  }
  return { accepted: new Set(codes), strict: Boolean(flags.strict) };
}

/** Whether `d` is a warning the user accepted. */
export function isAccepted(d: Diagnostic, verdict: Verdict | undefined): boolean {
  return d.severity === 'warning' && (verdict?.accepted.has(d.code) ?? false);
}

/** The warnings that count: those not accepted. */
export function countedWarnings(report: ValidationReport, verdict: Verdict | undefined): Diagnostic[] {
  return report.diagnostics.filter((d) => d.severity === 'warning' && !isAccepted(d, verdict));
}

/** Valid: no error, and under --strict no warning that is not accepted. */
export function passes(report: ValidationReport, verdict: Verdict | undefined): boolean {
  return report.ok && !(verdict?.strict && countedWarnings(report, verdict).length > 0);
}
