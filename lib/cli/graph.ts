// `mme-deploy graph <repo> [--format mermaid|dot] [--ensemble NAME]`: the ensemble pipeline as a picture — steps as
// nodes, tensors on the edges with data type and dims. Broken wiring is drawn too (dashed), so it helps debugging.

import { resolve } from 'node:path';
import type { Diagnostic } from '../diagnostics';
import { buildEnsembleGraph, checkEnsembles, topLevelEnsembles } from '../repository/ensemble-graph';
import { isEnsemble, stepsOf } from '../repository/ensemble-rules';
import { renderDot, renderMermaid } from '../repository/graph-render';
import type { LoadedModel } from '../repository/model';
import { loadRepository, RepositoryAccessError } from '../repository/validate';
import { MmeError } from '../errors';
import { CliError, CliIo, ExitCode, UsageError } from './io';

export const GRAPH_FORMATS = ['mermaid', 'dot'] as const;
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

export interface GraphCommandOptions {
  /** @default 'mermaid' */
  readonly format?: string;
  /** Draw this ensemble instead of every top-level ensemble (the ensembles it runs are drawn beside it either way). */
  readonly ensemble?: string;
}

export async function runGraph(path: string, options: GraphCommandOptions, io: CliIo): Promise<number> {
  const format = options.format ?? 'mermaid';
  if (!(GRAPH_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format ${format}: unknown format. Use one of: ${GRAPH_FORMATS.join(', ')}.`);
  }
  let repository;
  try {
    repository = await loadRepository(resolve(io.cwd, path));
  } catch (err) {
    if (err instanceof RepositoryAccessError) throw new MmeError(err.code, err.message.replace(resolve(io.cwd, path), path));
    throw err;
  }
  const models = new Map(repository.models.map((m) => [m.name, m] as const));
  const ensembles = chooseEnsembles(models, options.ensemble, path);

  const graphs = withNested(ensembles, models).map((e) => buildEnsembleGraph(e, models));
  io.stdout(format === 'dot' ? renderDot(graphs) : renderMermaid(graphs));

  const drawn = withNested(ensembles, models);
  const problems = ensembleProblems(models, repository.diagnostics, drawn);
  if (problems > 0) {
    io.stderr(
      `mme-deploy: ${problems} problem${problems === 1 ? '' : 's'} in the drawn ` +
        `ensemble${drawn.length === 1 ? '' : 's'} (loose tensors and missing models are drawn dashed). ` +
        `Run \`mme-deploy validate ${path}\` for details.\n`,
    );
  }
  return ExitCode.Ok;
}

function chooseEnsembles(models: ReadonlyMap<string, LoadedModel>, name: string | undefined, path: string): LoadedModel[] {
  const ensembles = [...models.values()].filter(isEnsemble);
  if (name !== undefined) {
    const model = models.get(name);
    if (model && isEnsemble(model)) return [model];
    const known = ensembles.map((e) => e.name).join(', ');
    throw new CliError(
      model
        ? `--ensemble ${name}: '${name}' is not an ensemble (its config.pbtxt has no platform: "ensemble" with ensemble_scheduling).` +
            (known ? ` Ensembles in ${path}: ${known}.` : '')
        : `--ensemble ${name}: no model named '${name}' in ${path}.` + (known ? ` Ensembles there: ${known}.` : ''),
    );
  }
  if (ensembles.length === 0) {
    const names = [...models.keys()];
    throw new CliError(
      `No ensemble in ${path}: none of its models (${names.join(', ') || 'none'}) has platform: "ensemble" with ensemble_scheduling. ` +
        `Give the repository that holds the ensemble and its composing models.`,
    );
  }
  return topLevelEnsembles(models);
}

/** The chosen ensembles, then the ensembles they run (at any depth), each once: each gets its own box. */
function withNested(chosen: readonly LoadedModel[], models: ReadonlyMap<string, LoadedModel>): LoadedModel[] {
  const order: LoadedModel[] = [];
  const queue = [...chosen];
  while (queue.length > 0) {
    const ensemble = queue.shift()!;
    if (order.includes(ensemble)) continue;
    order.push(ensemble);
    for (const step of stepsOf(ensemble.config)) {
      const inner = step.model_name ? models.get(step.model_name) : undefined;
      if (inner && isEnsemble(inner)) queue.push(inner);
    }
  }
  return order;
}

/** Errors of the drawn ensembles and of the ensembles they run, for a one-line hint on stderr. */
function ensembleProblems(
  models: ReadonlyMap<string, LoadedModel>,
  loadDiagnostics: readonly Diagnostic[],
  drawn: readonly LoadedModel[],
): number {
  const byModel = new Map<string, Diagnostic[]>();
  for (const d of loadDiagnostics) if (d.model !== undefined) byModel.set(d.model, [...(byModel.get(d.model) ?? []), d]);
  const names = new Set(drawn.map((e) => e.name));
  const ensembleErrors = checkEnsembles(models, { modelDiagnostics: byModel }).filter(
    (d) => d.severity === 'error' && d.model !== undefined && names.has(d.model),
  );
  const parseErrors = drawn.flatMap((e) => byModel.get(e.name) ?? []).filter((d) => d.severity === 'error');
  return ensembleErrors.length + parseErrors.length;
}
