// The table of diagnostic codes `--accept` reads: every code the rules write beside a severity is in it with that
// severity, every code the fixtures give is in it, and a code that cannot be accepted is refused by name.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { diagnosticCodes, diagnosticCodeSeverity, unacceptableCode } from '../../lib/repository/diagnostic-codes';
import { validateRepository } from '../../lib/repository/validate';

const LIB = join(__dirname, '..', '..', 'lib');
/** The parts of lib/ whose diagnostics reach a validation report. */
const REPORTING = ['repository', 'config', 'archive', 'bundle', 'model-files'];
const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)+$/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/**
 * (severity, code) for every call that names both as string literals (`diagnostic('warning', 'x', ...)`,
 * `report(tok, 'x', message, 'warning')`) or calls `.warning('x')` / `.error('x')`.
 */
function writtenCodes(): { severity: 'warning' | 'error'; code: string; file: string }[] {
  const found: { severity: 'warning' | 'error'; code: string; file: string }[] = [];
  for (const file of REPORTING.flatMap((part) => sources(join(LIB, part)))) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        const literals = node.arguments.filter(ts.isStringLiteral).map((a) => a.text);
        const severity = literals.find((t) => t === 'warning' || t === 'error') as 'warning' | 'error' | undefined;
        const code = literals.find((t) => KEBAB.test(t));
        const callee = node.expression;
        const method = ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
        const first = node.arguments[0];
        if (severity && code) found.push({ severity, code, file });
        else if ((method === 'warning' || method === 'error') && first && ts.isStringLiteral(first) && KEBAB.test(first.text)) {
          found.push({ severity: method, code: first.text, file });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

const allows = (severity: 'warning' | 'error', code: string) => {
  const known = diagnosticCodeSeverity(code);
  return known === 'either' || known === severity;
};

describe('diagnostic codes', () => {
  it('lists every code the rules write beside a severity, with that severity', () => {
    const written = writtenCodes();
    expect(written.length).toBeGreaterThan(150);
    const missing = written.filter((w) => !allows(w.severity, w.code)).map((w) => `${w.severity} ${w.code} (${w.file})`);
    expect(missing).toEqual([]);
  });

  it('lists every code the fixture repositories give, plain and under --mme, with its severity', async () => {
    const fixtures = join(__dirname, '..', 'fixtures');
    const seen: string[] = [];
    for (const name of readdirSync(fixtures)) {
      for (const mme of [false, true]) {
        const report = await validateRepository(join(fixtures, name), { mme, pythonSyntax: false }).catch(() => undefined);
        for (const d of report?.diagnostics ?? []) {
          // Under --mme an error of a model nothing loads is shown as a warning; its code stays an error code.
          if (!allows(d.severity, d.code) && !(mme && d.severity === 'warning' && diagnosticCodeSeverity(d.code))) {
            seen.push(`${d.severity} ${d.code} (${name})`);
          }
        }
      }
    }
    expect(seen).toEqual([]);
  });

  it('accepts warning codes and codes that are warnings or errors', () => {
    expect(unacceptableCode('tensorrt-plan-target')).toBeUndefined();
    expect(unacceptableCode('missing-inputs')).toBeUndefined();
    expect(diagnosticCodes()).toContain('python-syntax');
  });

  it('refuses an error code, saying it is one', () => {
    expect(unacceptableCode('python-syntax')).toBe(
      'python-syntax is an error code: an error is a load failure and cannot be accepted; fix it (only warnings can be accepted).',
    );
  });

  it('refuses an unknown code, suggesting the nearest warning code', () => {
    expect(unacceptableCode('tensorrt-plan-targt')).toBe(
      'tensorrt-plan-targt is not a warning code mme-deploy reports (did you mean tensorrt-plan-target?).',
    );
    expect(unacceptableCode('zzz')).toBe('zzz is not a warning code mme-deploy reports.');
  });
});
