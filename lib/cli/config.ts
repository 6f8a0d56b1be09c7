// `mme-deploy config <model-dir> --json`: the config as parsed (no auto-complete), or its parse errors.

import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MAX_CONFIG_BYTES, parseModelConfig } from '../config/parse';
import { configToJson } from '../config/print';
import { countSummary, hasErrors } from '../diagnostics';
import { unreadable } from '../errors';
import { CliIo, ExitCode, UsageError } from './io';
import { errorJson } from './json';
import { formatDiagnosticText } from './report-format';

export async function runConfig(path: string, io: CliIo, options: { json?: boolean } = {}): Promise<number> {
  let file = path;
  let stats;
  try {
    stats = statSync(path);
    if (stats.isDirectory()) {
      file = join(path, 'config.pbtxt');
      stats = statSync(file);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(file, err);
    throw new UsageError(`${file}: no such file. Give a model directory holding config.pbtxt, or the config file itself.`);
  }
  if (!stats.isFile()) throw new UsageError(`${file}: not a file.`);
  if (stats.size > MAX_CONFIG_BYTES) {
    throw new UsageError(`${file} is ${stats.size} bytes; a model configuration is at most ${MAX_CONFIG_BYTES} bytes.`);
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw unreadable(file, err);
  }
  const model = basename(dirname(file));
  const { config, diagnostics } = parseModelConfig(text, { file, model });
  for (const d of diagnostics) io.stderr(formatDiagnosticText(d) + '\n');
  if (hasErrors(diagnostics)) {
    const message = `${file} does not parse (${countSummary(diagnostics)}).`;
    if (options.json) io.stdout(errorJson('INVALID', message, { diagnostics: diagnostics.map(({ excerpt: _e, ...d }) => d) }));
    return ExitCode.Failure;
  }
  io.stdout(configToJson(config) + '\n');
  return ExitCode.Ok;
}
