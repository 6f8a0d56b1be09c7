// A model directory as the rules see it: where it is, what its config says, which versions Triton would load.

import type { ConfigPositions } from '../config/parse';
import type { ModelConfig } from '../config/model-config-schema';
import type { ModelFiles } from './model-files';

export interface VersionDir {
  /** The directory name as on disk (e.g. `1`). */
  readonly dirName: string;
  /** The version number Triton derives from the name. */
  readonly version: number;
}

export interface LoadedModel {
  /** The model's directory name (Triton's model name unless renamed by a SageMaker MME load). */
  readonly name: string;
  /** Absolute path of the model directory. */
  readonly dir: string;
  /** The model directory relative to the path the user gave, with `/`; '' when the user gave the model dir itself. */
  readonly relDir: string;
  /** `config.pbtxt` relative to the path the user gave (used as `file` in diagnostics). */
  readonly configFile: string;
  /** Whether config.pbtxt exists. */
  readonly hasConfig: boolean;
  /** The config text as read (for SageMaker's textual ensemble detection). */
  readonly configText?: string;
  /** The parsed config (partial when parsing failed). */
  readonly config: ModelConfig;
  readonly positions: ConfigPositions;
  /** False when the config had parse errors: rules that need a whole config skip the model. */
  readonly parsed: boolean;
  /** Numeric version directories found (after Triton's naming rules), ascending. */
  readonly versionDirs: readonly VersionDir[];
  /** Versions the version_policy selects among `versionDirs`, ascending. */
  readonly versions: readonly number[];
  /** Platform and backend after Triton's auto-complete (1.B), when they could be determined. */
  readonly platform?: string;
  readonly backend?: string;
  /** The model file name inside each version directory after auto-complete (e.g. `model.onnx`). */
  readonly defaultModelFilename?: string;
  /** The lexicographically first subdirectory: the one Triton inspects to infer the backend. */
  readonly firstSubdir?: string;
  /** Names of the entries in the model directory (sorted). */
  readonly entryNames: readonly string[];
  /** The files around the model, for the rules that look at them (rules never call the file system themselves). */
  readonly files: ModelFiles;
  /**
   * Set when `config` is the config as the backend completes it at load, reproduced offline (the model.onnx read,
   * auto_complete_config run): its inputs and outputs are then final.
   */
  readonly completedOffline?: boolean;
}

/**
 * The name Triton's config checks print: the config's `name`, else the directory name it is filled from (core
 * ValidateModelConfig runs before the name is compared with the directory, src/model_repository_manager/
 * model_repository_manager.cc InitializeModelInfo).
 */
export function tritonName(model: { readonly name: string; readonly config: { readonly name?: string } }): string {
  return model.config.name || model.name;
}

/** `a/b` joined with `/` for diagnostics' file fields ('' parts dropped). */
export function relPath(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/');
}
