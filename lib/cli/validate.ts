// `mme-deploy validate <path> [--json] [--mme] [--run-python]`: Triton's rules offline; exit 0 valid, 1 invalid, 2 usage/I-O.

import { RepositoryAccessError, validateRepository } from '../repository/validate';
import { CliIo, ExitCode, UsageError } from './io';
import { formatReport, reportToJson } from './report-format';

export async function runValidate(path: string, options: { json?: boolean; mme?: boolean; runPython?: boolean }, io: CliIo): Promise<number> {
  let report;
  try {
    report = await validateRepository(path, { mme: Boolean(options.mme), runPython: Boolean(options.runPython) });
  } catch (err) {
    if (err instanceof RepositoryAccessError) throw new UsageError(err.message);
    throw err;
  }
  if (options.json) io.stdout(JSON.stringify(reportToJson(report), null, 2) + '\n');
  else io.stdout(formatReport(report, path));
  return report.ok ? ExitCode.Ok : ExitCode.Failure;
}
