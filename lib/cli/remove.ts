// `mme-deploy remove <TargetModel>`: deletes one model from a multi-model endpoint's S3 prefix, after asking, and
// says what happens to instances that have it loaded (they keep serving it until SageMaker unloads it).

import { CliError, CliIo, ExitCode, UsageError } from './io';
import { ModelLocationCommandOptions, cachedCopyNote, connectionOf, formatBytes, toJson } from './aws-options';

export interface RemoveOptions extends ModelLocationCommandOptions {
  /** Delete without asking. */
  readonly yes?: boolean;
}

export async function runRemove(targetModel: string, options: RemoveOptions, io: CliIo): Promise<number> {
  const { createS3Client } = require('../aws/aws-clients') as typeof import('../aws/aws-clients');
  const { resolveModelLocation } = require('../aws/endpoint') as typeof import('../aws/endpoint');
  const { deleteTargetModel, headTargetModel } = require('../aws/model-store') as typeof import('../aws/model-store');
  const { s3Url } = require('../aws/s3-location') as typeof import('../aws/s3-location');
  const { targetModelNameProblem } = require('../repository/mme-rules') as typeof import('../repository/mme-rules');
  const problem = targetModelNameProblem(targetModel);
  if (problem) {
    throw new UsageError(`${problem} \`remove\` deletes TargetModels only (\`mme-deploy list\` marks other objects); delete those with \`aws s3 rm\`.`);
  }
  const connection = connectionOf(options);
  const { location } = await resolveModelLocation({ ...options, ...connection });
  const s3 = createS3Client(connection);
  try {
    const url = s3Url(location, targetModel);
    const existing = await headTargetModel(s3, location, targetModel, connection);
    if (!existing) {
      throw new CliError(`There is no ${url}; nothing was deleted. See what is there with \`mme-deploy list\`.`);
    }
    if (!options.yes) {
      if (!io.prompt) {
        throw new UsageError(`Refusing to delete ${url} without confirmation: stdin is not a terminal. Pass --yes to delete it.`);
      }
      const answer = await io.prompt(`Delete ${url} (${formatBytes(existing.size)})? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) {
        io.stderr('Not deleted.\n');
        return ExitCode.Failure;
      }
    }
    await deleteTargetModel(s3, location, targetModel, connection);
    if (options.json) io.stdout(toJson({ deleted: url, targetModel, size: existing.size }));
    else io.stdout(`Deleted ${url}.\n${cachedCopyNote(targetModel)} Invocations that have to load it again will fail.\n`);
    return ExitCode.Ok;
  } finally {
    s3.destroy();
  }
}
