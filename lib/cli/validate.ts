// `mme-deploy validate <path> [--json] [--mme] [--run-python]`: Triton's rules offline; exit 0 valid, 1 invalid, 2 usage/I-O.

import { validateRepository } from '../repository/validate';
import { CliIo, ExitCode } from './io';
import { toJson } from './json';
import { formatReport, reportToJson } from './report-format';

export async function runValidate(
  path: string,
  options: { json?: boolean; mme?: boolean; runPython?: boolean },
  io: CliIo,
): Promise<number> {
  // A path that cannot be read throws RepositoryAccessError, a coded MmeError the CLI reports with exit 2.
  const report = await validateRepository(path, { mme: Boolean(options.mme), runPython: Boolean(options.runPython) });
  if (options.json) io.stdout(toJson(reportToJson(report)));
  else io.stdout(formatReport(report, path));
  return report.ok ? ExitCode.Ok : ExitCode.Failure;
}
