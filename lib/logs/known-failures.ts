// The cause and fix of a failure in the endpoint's log: the one failure table (lib/catalog/triton-failures.ts), then,
// for a python error no rule names, the exception and the frame it was raised at.

import { KnownFailure, tritonFailure } from '../catalog/triton-failures';
import { exceptionType, splitPythonError } from './python-traceback';

/**
 * The known failure `reason` (with the backend's context lines) shows, or undefined. A python error without a more
 * specific rule is reported as `python-exception`, naming the exception and the innermost frame.
 */
export function knownFailure(reason: string, context: readonly string[] = []): KnownFailure | undefined {
  const known = tritonFailure(reason, context);
  if (known) return known;
  const text = context.length > 0 ? `${reason}\n${context.join('\n')}` : reason;
  const python = splitPythonError(text);
  if (python) {
    const type = exceptionType(python.exception) ?? 'an exception';
    const frame = python.frames[0];
    return {
      code: 'python-exception',
      title: `The python model raised ${type}${frame ? ` at ${frame}` : ''}.`,
      fix: 'Fix the model code; `mme-deploy local load` and `mme-deploy local invoke` run it on this machine before the next push.',
    };
  }
  return undefined;
}

/** An ensemble that could not load because a composing model failed (core MRM:1866-1906). */
export function ensembleDependencyFailure(dependency: string): KnownFailure {
  return {
    code: 'ensemble-dependency',
    title: `Composing model '${dependency}' failed, so the ensemble could not load.`,
    fix: `Fix '${dependency}': its own failure is reported beside this one.`,
  };
}
