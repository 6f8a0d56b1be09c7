// From what was read of one model directory to the LoadedModel the rules see: parses the config, names the version
// directories Triton would load (§1.A) and auto-completes platform and backend (§1.B). Pure: the directory listing,
// the config text and a view of the files come in, so a model can be built from disk or from a string alike.

import { join } from 'node:path';
import { ConfigPositions, parseModelConfig } from '../config/parse';
import type { ModelConfig } from '../config/model-config-schema';
import { diagnostic, type Diagnostic } from '../diagnostics';
import { autoCompleteBackendFields } from './backend-inference';
import { LoadedModel, relPath, VersionDir } from './model';
import type { ModelFiles } from './model-files';

export const CONFIG_FILE = 'config.pbtxt';

/** What was read of one model directory: the raw material of a LoadedModel. */
export interface ModelListing {
  /** Absolute path of the model directory. */
  readonly dir: string;
  /** The directory name. */
  readonly name: string;
  /** The model directory relative to the path the user gave, with `/`; '' when the user gave the model dir itself. */
  readonly relDir: string;
  /** Names of the entries in the model directory, sorted bytewise. */
  readonly entryNames: readonly string[];
  /** The subdirectories (links to directories included, ignored names left out), sorted bytewise. */
  readonly subdirs: readonly string[];
  /** Whether config.pbtxt exists as a file. */
  readonly hasConfig: boolean;
  /** config.pbtxt's text, when it exists and was read. */
  readonly configText?: string;
  readonly files: ModelFiles;
}

const SKIPPED_VERSION_DIRS = new Set(['warmup', 'initial_state', 'configs']);

/** Builds the model, adding parse and version-directory faults to `diagnostics`. */
export function buildModel(listing: ModelListing, diagnostics: Diagnostic[]): LoadedModel {
  const { dir, name, relDir, hasConfig, configText, subdirs, files } = listing;
  const configFile = relPath(relDir, CONFIG_FILE);
  let config: ModelConfig = {};
  let positions = new ConfigPositions();
  let parsed = false;
  if (configText !== undefined) {
    // Positions are found again from the text when a rule reports something: most models never need them.
    const result = parseModelConfig(configText, { file: configFile, model: name, deferPositions: true });
    config = result.config;
    positions = result.positions;
    parsed = !result.diagnostics.some((d) => d.severity === 'error');
    diagnostics.push(...result.diagnostics);
  }

  const versionDirs = findVersionDirs(subdirs, relDir, name, diagnostics);
  const firstSubdir = subdirs[0];
  const listFirstSubdir = (): ReadonlySet<string> => (firstSubdir === undefined ? new Set() : files.list(join(dir, firstSubdir)));
  const fields = autoCompleteBackendFields(config, name, listFirstSubdir);
  const versions = selectVersions(config, versionDirs);

  return {
    name,
    dir,
    relDir,
    configFile,
    hasConfig,
    configText,
    config,
    positions,
    parsed: parsed || !hasConfig,
    versionDirs,
    versions,
    // Plain properties (undefined when unknown): object spreads cost measurably over ten thousand models.
    platform: fields.platform,
    backend: fields.backend,
    defaultModelFilename: fields.defaultModelFilename,
    firstSubdir,
    entryNames: listing.entryNames,
    files,
  };
}

/** Version directories by Triton's rules (§1.A): std::stoll on the name, leading zeros and non-numbers ignored. */
function findVersionDirs(subdirs: readonly string[], relDir: string, model: string, diagnostics: Diagnostic[]): VersionDir[] {
  const versions: VersionDir[] = [];
  for (const dirName of subdirs) {
    if (SKIPPED_VERSION_DIRS.has(dirName)) continue;
    const source = { file: relPath(relDir, dirName), model };
    if (dirName.length > 1 && dirName.startsWith('0')) {
      const message =
        `Triton ignores this directory: "ignore version directory '${dirName}' which contains leading zeros in its ` +
        `directory name". Rename it to ${String(Number.parseInt(dirName, 10))} if it is a version.`;
      diagnostics.push(diagnostic('warning', 'version-leading-zeros', message, source));
      continue;
    }
    const match = /^[ \t\n]*([+-]?\d+)/.exec(dirName);
    if (!match) {
      const message =
        `Triton ignores this directory: "ignore version directory '${dirName}' which fails to convert to integral ` +
        `number". Version directories are named by number (1, 2, ...); move other files out of ${model}/ ` +
        'subdirectories or delete them.';
      diagnostics.push(diagnostic('warning', 'version-not-numeric', message, source));
      continue;
    }
    const version = Number(match[1]);
    if (match[0] !== dirName) {
      const message =
        `Triton reads the directory name '${dirName}' as version ${version} (it parses only the leading number). ` +
        `Rename it to ${version} to say what you mean.`;
      diagnostics.push(diagnostic('warning', 'version-numeric-prefix', message, source));
    }
    versions.push({ dirName, version });
  }
  return versions.sort((a, b) => a.version - b.version);
}

/**
 * Applies version_policy to the version directories present, as core's VersionsToLoad does
 * (src/model_repository_manager/model_lifecycle.cc:114-136): `latest` takes the num_versions greatest, and only a
 * config without any version_policy gets `latest { num_versions: 1 }` (NormalizeModelConfig,
 * src/model_config_utils.cc:767-771) — `latest { num_versions: 0 }` or `latest { }` selects none.
 */
function selectVersions(config: ModelConfig, versionDirs: readonly VersionDir[]): number[] {
  const available = [...new Set(versionDirs.map((v) => v.version))].sort((a, b) => a - b);
  const policy = config.version_policy;
  if (policy?.all) return available;
  if (policy?.specific) {
    const wanted = new Set((policy.specific.versions ?? []).map((v) => Number(v)));
    return available.filter((v) => wanted.has(v));
  }
  const n = policy?.latest ? (policy.latest.num_versions ?? 0) : policy ? 0 : 1;
  return n <= 0 ? [] : available.slice(Math.max(0, available.length - n));
}
