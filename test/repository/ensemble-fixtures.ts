// Loads a fixture repository under test/fixtures/ for the ensemble tests, through the repository discovery the CLI uses.

import { join } from 'node:path';
import { discoverModels } from '../../lib/repository/discover';
import type { Diagnostic } from '../../lib/diagnostics';
import type { LoadedModel } from '../../lib/repository/model';

export const FIXTURES = join(__dirname, '..', 'fixtures');

export interface FixtureRepository {
  readonly path: string;
  readonly models: ReadonlyMap<string, LoadedModel>;
  /** What discovery and the parser reported, by model name. */
  readonly diagnostics: ReadonlyMap<string, readonly Diagnostic[]>;
  model(name: string): LoadedModel;
}

/** `test/fixtures/ensemble-<name>/` as models keyed by name. */
export function loadFixture(name: string): FixtureRepository {
  const path = join(FIXTURES, `ensemble-${name}`);
  const discovery = discoverModels(path);
  const models = new Map(discovery.models.map((m) => [m.name, m] as const));
  const diagnostics = new Map<string, Diagnostic[]>();
  for (const d of discovery.diagnostics) {
    if (d.model !== undefined) diagnostics.set(d.model, [...(diagnostics.get(d.model) ?? []), d]);
  }
  return {
    path,
    models,
    diagnostics,
    model(modelName: string) {
      const model = models.get(modelName);
      if (!model) throw new Error(`fixture ensemble-${name} has no model ${modelName}`);
      return model;
    },
  };
}
