// `mme-deploy list`: every TargetModel under a multi-model endpoint's S3 prefix, with size and last change,
// printed page by page so thousands of models start showing at once.

import { createS3Client } from '../aws/aws-clients';
import { resolveModelLocation } from '../aws/endpoint';
import { listTargetModels } from '../aws/model-store';
import { s3Url } from '../aws/s3-location';
import { formatBytes } from '../format-bytes';
import { shellCommand } from '../shell-quote';
import { ModelLocationCommandOptions, connectionOf } from './aws-options';
import { CliIo, ExitCode } from './io';
import { toJson } from './json';
import { escapeLine } from './terminal-text';

export async function runList(options: ModelLocationCommandOptions, io: CliIo): Promise<number> {
  const connection = connectionOf(options);
  const { location, endpoint } = await resolveModelLocation({ ...options, ...connection });
  const s3 = await createS3Client(connection);
  try {
    let count = 0;
    let total = 0;
    const models = [];
    // Objects whose key is no TargetModel name (`sub/x.tar.gz`): shown, marked, and explained once at the end.
    const notTargetModels: string[] = [];
    for await (const model of listTargetModels(s3, location, connection)) {
      count += 1;
      total += model.size;
      if (options.json) {
        const lastModified = model.lastModified?.toISOString() ?? null;
        models.push({
          targetModel: model.targetModel,
          size: model.size,
          lastModified,
          ...(model.problem ? { problem: model.problem } : {}),
        });
        continue;
      }
      if (count === 1) io.stdout(`${'SIZE'.padStart(10)}  ${'LAST MODIFIED (UTC)'.padEnd(19)}  TARGETMODEL\n`);
      const when = model.lastModified ? model.lastModified.toISOString().slice(0, 19).replace('T', ' ') : '-';
      // An S3 key may hold a newline: one object, one line.
      if (model.problem) notTargetModels.push(escapeLine(model.problem));
      io.stdout(`${formatBytes(model.size).padStart(10)}  ${when.padEnd(19)}  ` +
        `${escapeLine(model.targetModel)}${model.problem ? '  (not a TargetModel)' : ''}\n`);
    }
    const where = s3Url(location);
    if (options.json) {
      io.stdout(toJson({ location: where, endpoint: endpoint?.endpointName ?? null, count, totalSize: total, models }));
    } else if (count === 0) {
      const to = options.endpoint ? ['--endpoint', options.endpoint] : ['--s3', where];
      io.stdout(`No models under ${where}. Add one with: mme-deploy push <repository-dir> ${shellCommand(to)}\n`);
    } else {
      io.stdout(`${count} model${count === 1 ? '' : 's'}, ${formatBytes(total)} under ${where}\n`);
      if (notTargetModels.length > 0) {
        io.stdout(`${notTargetModels.length} object(s) marked (not a TargetModel) cannot be loaded, invoked or ` +
          `removed by name: ${notTargetModels[0]} Delete them with \`aws s3 rm\`.\n`);
      }
    }
    return ExitCode.Ok;
  } finally {
    s3.destroy();
  }
}
