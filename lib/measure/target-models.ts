// The TargetModels a measurement covers and what smoke needs of each: the served model's config and the few files
// beside it that make its requests (warmup/ data, `<input>.sample`). From the endpoint's S3 prefix (each archive
// streamed once, never written to disk) or from what `local load` extracted into the local models directory.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ModelConfig } from '../config/model-config-schema';
import { readTarGz } from '../archive/tar-reader';
import { MmeError } from '../errors';
import { AwsConnection, createS3Client, createSageMakerClient, loadS3 } from '../aws/aws-clients';
import { explainAwsError, isNotFound } from '../aws/aws-errors';
import { shellCommand } from '../shell-quote';
import { ResolvedEndpoint, resolveEndpoint } from '../aws/endpoint';
import { readInvokeModelConfig, servedConfig } from '../aws/invoke-model-config';
import { listTargetModels } from '../aws/model-store';
import { objectKey, s3Url } from '../aws/s3-location';
import { listStaged } from '../local/model-store';
import type { InvocationFailure } from './invoker';
import { ModelFiles, SAMPLE_SUFFIX } from './smoke-inputs';

export interface TargetModelSource {
  readonly targetModel: string;
  /** Set when the archive could not be read; the other fields are then empty. */
  readonly failure?: InvocationFailure;
  readonly config: ModelConfig;
  /** Where the config was read, for messages: `s3://b/p/x.tar.gz:ensemble/config.pbtxt`. */
  readonly source: string;
  readonly files: ModelFiles;
}

/** Files beside a config larger than this are not sample data; they are skipped, not buffered. */
const MAX_SAMPLE_BYTES = 6 * 1024 * 1024;

/** Whether a path relative to the served model's directory is one smoke reads. */
function isSmokeFile(relative: string): boolean {
  return relative.startsWith('warmup/') || (!relative.includes('/') && relative.endsWith(SAMPLE_SUFFIX));
}

/** The endpoint (DescribeEndpoint, ...) and the names of its TargetModels: `names` when given, else every one. */
export async function endpointTargetModels(
  connection: AwsConnection,
  endpointName: string,
  options: { readonly names?: readonly string[]; readonly variant?: string } = {},
): Promise<{ endpoint: ResolvedEndpoint; names: string[] }> {
  const sageMaker = await createSageMakerClient(connection);
  let endpoint: ResolvedEndpoint;
  try {
    endpoint = await resolveEndpoint(sageMaker, endpointName, { ...connection, ...(options.variant ? { variant: options.variant } : {}) });
  } finally {
    sageMaker.destroy();
  }
  if (options.names && options.names.length > 0) return { endpoint, names: [...options.names] };
  const s3 = await createS3Client(connection);
  const names: string[] = [];
  try {
    for await (const stored of listTargetModels(s3, endpoint.location, connection)) if (!stored.problem) names.push(stored.targetModel);
  } finally {
    s3.destroy();
  }
  if (names.length === 0) {
    throw new MmeError('AWS_NOT_FOUND', `Endpoint '${endpointName}' has no TargetModel under ${s3Url(endpoint.location)}; ` +
      '`mme-deploy push` one first.');
  }
  return { endpoint, names };
}

/** Reads each TargetModel's archive from the endpoint's S3 prefix, one after another. */
export async function* readEndpointSources(
  connection: AwsConnection,
  endpoint: ResolvedEndpoint,
  names: readonly string[],
  signal?: AbortSignal,
): AsyncGenerator<TargetModelSource> {
  const s3 = await createS3Client(connection);
  const { GetObjectCommand } = await loadS3();
  try {
    for (const targetModel of names) {
      const url = s3Url(endpoint.location, targetModel);
      let body: Readable;
      try {
        const object = await s3.send(
          new GetObjectCommand({ Bucket: endpoint.location.bucket, Key: objectKey(endpoint.location, targetModel) }),
          signal ? { abortSignal: signal } : {},
        );
        body = object.Body as Readable;
      } catch (err) {
        if (!isNotFound(err)) throw explainAwsError(err, { ...connection, permission: 's3:GetObject', resource: url });
        const list = shellCommand(['mme-deploy', 'list', '--endpoint', endpoint.endpointName]);
        const message = `${url} does not exist, so InvokeEndpoint would answer "Failed to download model data". TargetModel is ` +
          `the archive's key below the endpoint's S3 prefix: check the name with \`${list}\`, or push it.`;
        yield { targetModel, failure: { cause: 'not-found', code: 'AWS_NOT_FOUND', message }, config: {}, source: url, files: new Map() };
        continue;
      }
      try {
        yield { targetModel, ...(await scanArchive(body, url, signal)) };
      } catch (err) {
        if (!(err instanceof MmeError) || err.code === 'ABORTED') throw err;
        const failure = { cause: 'bad-archive', code: err.code, message: err.message };
        yield { targetModel, failure, config: {}, source: url, files: new Map() };
      }
    }
  } finally {
    s3.destroy();
  }
}

/** The served model's config and smoke files from an archive stream (read to its end, as every archive check is). */
export async function scanArchive(archive: Readable, shown: string, signal?: AbortSignal): Promise<Omit<TargetModelSource, 'targetModel'>> {
  let root: string | undefined;
  const dirs = new Map<string, string | undefined>();
  const smallFiles = new Map<string, Buffer>();
  try {
    await readTarGz(archive, async (entry, content) => {
      const path = entry.path.replace(/^\.\//, '');
      if (path === '' || path === '.' || path.startsWith('/') || path.split('/').includes('..')) return;
      const segments = path.split('/');
      if (entry.type === 'file' && path === 'config.pbtxt') root = await readAll(content);
      if (segments.length > 1 || entry.type === 'directory') {
        if (!dirs.has(segments[0]!)) dirs.set(segments[0]!, undefined);
      }
      if (entry.type === 'file' && segments.length === 2 && segments[1] === 'config.pbtxt') {
        dirs.set(segments[0]!, await readAll(content));
      } else if (entry.type === 'file' && entry.size <= MAX_SAMPLE_BYTES) {
        // Kept for every directory (and the root): which one is served is known only at the end.
        const inDir = segments.slice(1).join('/');
        if (isSmokeFile(path) || (segments.length > 1 && isSmokeFile(inDir))) smallFiles.set(path, await readBytes(content));
      }
    }, signal ? { signal } : {});
  } catch (err) {
    if (err instanceof MmeError && err.code === 'ABORTED') throw err;
    throw new MmeError('UNREADABLE', `${shown} is not a readable tar.gz archive: ${(err as Error).message}`);
  }
  const served = servedConfig(shown, root, dirs);
  const files = new Map<string, Buffer>();
  const prefix = served.model === '.' ? '' : `${served.model}/`;
  for (const [path, bytes] of smallFiles) {
    if (path.startsWith(prefix) && isSmokeFile(path.slice(prefix.length))) files.set(path.slice(prefix.length), bytes);
  }
  return { config: served.config, source: served.source, files };
}

/**
 * What `local load` extracted into `modelsDir` (its record names each TargetModel): `names` when given, else every
 * one. Reads the served config from the extracted directory as `local invoke` does.
 */
export async function localSources(modelsDir: string, names?: readonly string[]): Promise<TargetModelSource[]> {
  const staged = await listStaged(modelsDir);
  const byName = new Map([...staged].map(([hash, record]) => [record.targetModel, hash]));
  const wanted = names && names.length > 0 ? names : [...byName.keys()].sort();
  if (wanted.length === 0) {
    throw new MmeError('USAGE', `Nothing to smoke-test: ${modelsDir} holds no archive loaded with \`mme-deploy local load\`.`);
  }
  const sources: TargetModelSource[] = [];
  for (const targetModel of wanted) {
    const hash = byName.get(targetModel);
    if (!hash) {
      const known = [...byName.keys()].join(', ') || 'none';
      throw new MmeError('USAGE', `${targetModel} was not loaded into ${modelsDir} with \`mme-deploy local load\` (loaded: ${known}).`);
    }
    const dir = join(modelsDir, hash, 'model');
    const served = await readInvokeModelConfig(dir);
    const modelDir = served.model === '.' ? dir : join(dir, served.model);
    sources.push({ targetModel, config: served.config, source: served.source, files: await readSmokeFiles(modelDir) });
  }
  return sources;
}

async function readSmokeFiles(modelDir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const entries = await readdir(modelDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isFile() && entry.name.endsWith(SAMPLE_SUFFIX)) files.set(entry.name, await readFile(join(modelDir, entry.name)));
  }
  const warmup = await readdir(join(modelDir, 'warmup'), { withFileTypes: true }).catch(() => []);
  for (const entry of warmup) {
    if (entry.isFile()) files.set(`warmup/${entry.name}`, await readFile(join(modelDir, 'warmup', entry.name)));
  }
  return files;
}

async function readAll(content: Readable): Promise<string> {
  return (await readBytes(content)).toString('utf8');
}

async function readBytes(content: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
