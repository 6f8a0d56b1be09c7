// `mme-deploy config <model-dir> --json`: the config as parsed (no auto-complete), or its parse errors.

import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MAX_CONFIG_BYTES, parseModelConfig } from '../config/parse';
import { configToJson } from '../config/print';
import { formatDiagnostic, hasErrors } from '../diagnostics';
import { CliIo, ExitCode, UsageError } from './io';

export async function runConfig(path: string, io: CliIo): Promise<number> {
  let file = path;
  let stats;
  try {
    stats = statSync(path);
    if (stats.isDirectory()) {
      file = join(path, 'config.pbtxt');
      stats = statSync(file);
    }
  } catch {
    throw new UsageError(`${file}: no such file. Give a model directory holding config.pbtxt, or the config file itself.`);
  }
  if (!stats.isFile()) throw new UsageError(`${file}: not a file.`);
  if (stats.size > MAX_CONFIG_BYTES) {
    throw new UsageError(`${file} is ${stats.size} bytes; a model configuration is at most ${MAX_CONFIG_BYTES} bytes.`);
  }
  const model = basename(dirname(file));
  const { config, diagnostics } = parseModelConfig(readFileSync(file, 'utf8'), { file, model });
  for (const d of diagnostics) io.stderr(formatDiagnostic(d) + '\n');
  if (hasErrors(diagnostics)) return ExitCode.Failure;
  io.stdout(configToJson(config) + '\n');
  return ExitCode.Ok;
}
