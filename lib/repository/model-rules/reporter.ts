// How the model rules report: each fault placed at the field it is about (line, column and caret excerpt), through the
// one diagnostic builder.

import { diagnostic, type Diagnostic, type Severity } from '../../diagnostics';
import { configSource } from '../ensemble-rules';
import type { LoadedModel } from '../model';

export class Reporter {
  constructor(
    readonly model: LoadedModel,
    private readonly out: Diagnostic[],
  ) {}

  /** A fault at `field` (its `index`-th value for a list) of the message `at`, or at `at` itself. */
  error(code: string, at: object | undefined, field: string | undefined, message: string, index?: number) {
    this.add('error', code, at, field, message, index);
  }

  warning(code: string, at: object | undefined, field: string | undefined, message: string, index?: number) {
    this.add('warning', code, at, field, message, index);
  }

  /** A diagnostic on a file other than config.pbtxt (no line). */
  file(severity: Severity, code: string, file: string, message: string) {
    this.out.push(diagnostic(severity, code, message, { file, model: this.model.name }));
  }

  private add(severity: Severity, code: string, at: object | undefined, field: string | undefined, message: string, index?: number) {
    const pos = this.model.positions.of(at, field, index) ?? this.model.positions.of(at);
    this.out.push(diagnostic(severity, code, message, configSource(this.model), pos));
  }
}
