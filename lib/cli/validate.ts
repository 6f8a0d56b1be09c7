// `mme-deploy validate <path> [--json] [--mme] [--run-python]`: Triton's rules offline; exit 0 valid, 1 invalid, 2 usage/I-O.

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { validateRepository } from '../repository/validate';
import { MmeError } from '../errors';
import { CliIo, ExitCode } from './io';
import { toJson } from './json';
import { formatReport, reportToJson } from './report-format';

export async function runValidate(
  path: string,
  options: { json?: boolean; mme?: boolean; runPython?: boolean },
  io: CliIo,
): Promise<number> {
  // A path that cannot be read throws RepositoryAccessError, a coded MmeError the CLI reports with exit 2.
  const report = isArchive(path)
    ? await validateArchiveFile(path, options)
    : await validateRepository(path, { mme: Boolean(options.mme), runPython: Boolean(options.runPython) });
  if (options.json) io.stdout(toJson(reportToJson(report)));
  else io.stdout(formatReport(report, path));
  return report.ok ? ExitCode.Ok : ExitCode.Failure;
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
async function validateArchiveFile(path: string, options: { mme?: boolean; runPython?: boolean }) {
  if (options.runPython) {
    throw new MmeError('USAGE', `--run-python needs a directory: extract ${path} and validate the directory.`);
  }
  const { validateTargetModelArchive } = await import('../bundle/verify-archive');
  return validateTargetModelArchive(path, path, { mme: Boolean(options.mme) });
}
