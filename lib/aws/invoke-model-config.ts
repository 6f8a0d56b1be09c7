// Finds the config.pbtxt of the model SageMaker would serve from a TargetModel archive or repository directory, so
// `invoke` can shape inputs without asking the user: the ensemble when there is one, as Triton's MME loader picks it.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ModelConfig } from '../config/model-config-schema';
import { readTarGz } from '../archive/tar-reader';
import { parseModelConfig } from '../config/parse';
import { MmeError } from '../errors';

export interface InvokeModelConfig {
  readonly config: ModelConfig;
  /** The model directory inside the archive (`.` when config.pbtxt sits at its root). */
  readonly model: string;
  /** Where the config was read, for messages: `archive.tar.gz:ensemble/config.pbtxt`. */
  readonly source: string;
}

/** Triton's textual ensemble test (sagemaker_server.cc uses this RE2 pattern as a partial match). */
const ENSEMBLE_PLATFORM = /platform:(\s)*"ensemble"/;

interface Candidate {
  readonly dir: string;
  readonly text: string;
}

/**
 * Reads the served model's config from a `.tar.gz`/`.tar` archive or a repository directory. Selection follows
 * SageMakerMMELoadModel (triton-inference-server/server:src/sagemaker_server.cc:947-1145): a config.pbtxt at the
 * root wins; else the directory whose config declares `platform: "ensemble"`; else the only directory. Where
 * SageMaker's own choice would depend on readdir order (several ensembles, or several directories and no ensemble)
 * this refuses and says so.
 */
export async function readInvokeModelConfig(path: string): Promise<InvokeModelConfig> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch {
    throw new MmeError('NOT_FOUND', `--model ${path} does not exist; give the TargetModel's .tar.gz or its repository directory.`);
  }
  const { root, dirs } = isDirectory ? await scanDirectory(path) : await scanArchive(path, path);
  return servedConfig(path, root, dirs);
}

/**
 * The served model's config from an archive read as a stream (`push` reads the bytes it uploads), chosen and checked
 * as readInvokeModelConfig does; `shown` names the archive in messages.
 */
export async function readStreamedModelConfig(archive: Readable, shown: string): Promise<InvokeModelConfig> {
  const { root, dirs } = await scanArchive(archive, shown);
  return servedConfig(shown, root, dirs);
}

export function servedConfig(path: string, root: string | undefined, dirs: Map<string, string | undefined>): InvokeModelConfig {
  const chosen = choose(path, root, dirs);
  const file = chosen.dir === '.' ? 'config.pbtxt' : `${chosen.dir}/config.pbtxt`;
  const source = `${path}:${file}`;
  const { config, diagnostics } = parseModelConfig(chosen.text, { file });
  const error = diagnostics.find((d) => d.severity === 'error');
  if (error) {
    const where = error.line ? `:${error.line}${error.column ? `:${error.column}` : ''}` : '';
    throw new MmeError('INVALID', `${source}${where}: ${error.message} Run \`mme-deploy validate\` on the repository for every problem.`);
  }
  return { config, model: chosen.dir, source };
}

function choose(path: string, root: string | undefined, dirs: Map<string, string | undefined>): Candidate {
  if (root !== undefined) return { dir: '.', text: root };
  const withConfig = [...dirs].filter((entry): entry is [string, string] => entry[1] !== undefined);
  const ensembles = withConfig.filter(([, text]) => ENSEMBLE_PLATFORM.test(text));
  if (ensembles.length === 1) return { dir: ensembles[0]![0], text: ensembles[0]![1] };
  if (ensembles.length > 1) {
    throw new MmeError(
      'INVALID',
      `${path} holds ${ensembles.length} ensembles (${ensembles.map(([d]) => d).join(', ')}); SageMaker would serve ` +
        'whichever the file system lists last. Keep one top-level ensemble per archive, or pass --shape/--datatype instead of --model.',
    );
  }
  if (dirs.size === 1 && withConfig.length === 1) return { dir: withConfig[0]![0], text: withConfig[0]![1] };
  if (dirs.size === 0) throw new MmeError('INVALID', `${path} holds no model directory with a config.pbtxt.`);
  if (withConfig.length === 0) throw new MmeError('INVALID', `${path} has no config.pbtxt in ${[...dirs.keys()].join(', ')}.`);
  throw new MmeError(
    'INVALID',
    `${path} holds ${dirs.size} directories (${[...dirs.keys()].join(', ')}) and no ensemble; SageMaker would serve ` +
      'whichever the file system lists last. Add an ensemble, or pass --shape/--datatype instead of --model.',
  );
}

async function scanDirectory(path: string): Promise<{ root?: string; dirs: Map<string, string | undefined> }> {
  const root = await readOptional(join(path, 'config.pbtxt'));
  const dirs = new Map<string, string | undefined>();
  if (root !== undefined) return { root, dirs };
  const entries = await readdir(path, { withFileTypes: true });
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    dirs.set(entry.name, await readOptional(join(path, entry.name, 'config.pbtxt')));
  }
  return { dirs };
}

async function scanArchive(source: string | Readable, path: string): Promise<{ root?: string; dirs: Map<string, string | undefined> }> {
  let root: string | undefined;
  const dirs = new Map<string, string | undefined>();
  try {
    await readTarGz(source, async (entry, content) => {
      if (entry.path === '.' || entry.path.startsWith('/') || entry.path.split('/').includes('..')) return;
      const segments = entry.path.split('/');
      if (entry.type === 'file' && entry.path === 'config.pbtxt') root = await readAll(content);
      if (segments.length > 1 || entry.type === 'directory') {
        if (!dirs.has(segments[0]!)) dirs.set(segments[0]!, undefined);
      }
      if (entry.type === 'file' && segments.length === 2 && segments[1] === 'config.pbtxt') {
        dirs.set(segments[0]!, await readAll(content));
      }
    });
  } catch (err) {
    throw new MmeError('UNREADABLE', `--model ${path} is not a readable tar.gz archive: ${(err as Error).message}`);
  }
  return root !== undefined ? { root, dirs } : { dirs };
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function readAll(content: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
