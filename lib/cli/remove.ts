// `mme-deploy remove <TargetModel>`: deletes one model from a multi-model endpoint's S3 prefix, after asking, and
// says what happens to instances that have it loaded (they keep serving it until SageMaker unloads it).

import { createS3Client } from '../aws/aws-clients';
import { resolveModelLocation } from '../aws/endpoint';
import { cachedCopyNote, deleteTargetModel, headTargetModel } from '../aws/model-store';
import { s3Url } from '../aws/s3-location';
import { MmeError } from '../errors';
import { formatBytes } from '../format-bytes';
import { targetModelNameProblem } from '../repository/mme-rules';
import { ModelLocationCommandOptions, connectionOf } from './aws-options';
import { CliIo, ExitCode, note } from './io';
import { toJson } from './json';

export interface RemoveOptions extends ModelLocationCommandOptions {
  /** Delete without asking. */
  readonly yes?: boolean;
}

export async function runRemove(targetModel: string, options: RemoveOptions, io: CliIo): Promise<number> {
  const problem = targetModelNameProblem(targetModel);
  if (problem) {
    const only = '`remove` deletes TargetModels only (`mme-deploy list` marks other objects); delete those with `aws s3 rm`.';
    throw new MmeError('USAGE', `${problem} ${only}`);
  }
  const connection = connectionOf(options);
  const { location } = await resolveModelLocation({ ...options, ...connection });
  const s3 = await createS3Client(connection);
  try {
    const url = s3Url(location, targetModel);
    const existing = await headTargetModel(s3, location, targetModel, connection);
    if (!existing) {
      throw new MmeError('AWS_NOT_FOUND', `There is no ${url}; nothing was deleted. See what is there with \`mme-deploy list\`.`);
    }
    if (!options.yes) {
      if (!io.prompt) {
        const message = `Refusing to delete ${url} without confirmation: stdin is not a terminal. Pass --yes to delete it.`;
        throw new MmeError('USAGE', message);
      }
      const answer = await io.prompt(`Delete ${url} (${formatBytes(existing.size)})? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) {
        note(io, 'Not deleted.\n');
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
