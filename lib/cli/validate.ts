// `mme-deploy validate <path> [--json] [--mme] [--run-python] [--no-python-syntax] [--instance-type T] [--triton-version V]
// [--accept CODE]... [--strict]`: Triton's rules offline; exit 0 valid, 1 invalid (or warnings under --strict), 2 usage/I-O.

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { endpointTarget } from '../catalog/endpoint-target';
import { validateRepository, type ValidateOptions } from '../repository/validate';
import type { PlanTarget } from '../repository/tensorrt-plan-rules';
import { MmeError } from '../errors';
import { CliIo, ExitCode } from './io';
import { toJson } from './json';
import { formatReport, reportToJson } from './report-format';
import type { TargetFlags, VerdictFlags } from './target-options';
import { passes, verdictOf } from './verdict';

export interface ValidateCommandOptions extends TargetFlags, VerdictFlags {
  readonly json?: boolean;
  readonly mme?: boolean;
  readonly runPython?: boolean;
  /** `--no-python-syntax` sets it false. @default true */
  readonly pythonSyntax?: boolean;
}

export async function runValidate(path: string, options: ValidateCommandOptions, io: CliIo): Promise<number> {
  // The flags first: a bad --instance-type, --triton-version or --accept is a usage error before any work.
  const target = targetOf(options, Boolean(options.mme));
  const verdict = await verdictOf(options);
  // The python3 of the user's environment (PATH, MME_DEPLOY_PYTHON) compiles model.py.
  const common = { ...(target ? { target } : {}), pythonSyntax: options.pythonSyntax !== false && { env: io.env } };
  // A path that cannot be read throws RepositoryAccessError, a coded MmeError the CLI reports with exit 2.
  const report = isArchive(path)
    ? await validateArchiveFile(path, options, common)
    : await validateRepository(path, { mme: Boolean(options.mme), runPython: Boolean(options.runPython), ...common });
  if (options.json) io.stdout(toJson(reportToJson(report, verdict)));
  else io.stdout(formatReport(report, path, verdict));
  return passes(report, verdict) ? ExitCode.Ok : ExitCode.Failure;
}

/**
 * The endpoint named by --instance-type and --triton-version (checked as `local load` checks them), or undefined when
 * neither is given: the rules then take the constructs' defaults. `multiModel`: the repository is for a GPU MME
 * (`--mme`, `package`), so a type none runs on is a usage error.
 */
export function targetOf(flags: TargetFlags, multiModel: boolean): PlanTarget | undefined {
  if (flags.instanceType === undefined && flags.tritonVersion === undefined) return undefined;
  const { instanceType, tritonVersion } = endpointTarget({ ...flags, multiModel });
  return { instanceType: instanceType.name, tritonVersion };
}

/** A file named like an archive or starting with gzip's magic; any other file gets discovery's "not a directory". */
function isArchive(path: string): boolean {
  if (!(statSync(path, { throwIfNoEntry: false })?.isFile() ?? false)) return false;
  if (/\.(tar\.gz|tgz|tar)$/i.test(path)) return true;
  const magic = Buffer.alloc(2);
  try {
    const fd = openSync(path, 'r');
    try {
      readSync(fd, magic, 0, 2, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false; // discovery reports the path
  }
  return magic[0] === 0x1f && magic[1] === 0x8b;
}

/** A TargetModel archive: read to its end and judged as SageMaker extracts it (the module loads only then). */
async function validateArchiveFile(
  path: string,
  options: { mme?: boolean; runPython?: boolean },
  common: { target?: PlanTarget; pythonSyntax: ValidateOptions['pythonSyntax'] },
) {
  if (options.runPython) {
    throw new MmeError('USAGE', `--run-python needs a directory: extract ${path} and validate the directory.`);
  }
  const { validateTargetModelArchive } = await import('../bundle/verify-archive');
  return validateTargetModelArchive(path, path, { mme: Boolean(options.mme), ...common });
}
