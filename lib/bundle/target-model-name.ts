// The one naming rule of versioned TargetModels, shared by `mme-deploy push --versioned` and the CDK ModelArchive:
// `<name>-<first 12 hex digits of the archive's SHA-256>.tar.gz`. A changed archive gets a new key, so instances that
// cached the old one never serve it under the new name (AWS: "To update a model ... Use a new and unique name. Don't
// overwrite model artifacts in Amazon S3 because the old version of the model might still be loaded",
// https://docs.aws.amazon.com/sagemaker/latest/dg/add-models-to-endpoint.html).
// The packer is deterministic, so the same repository packed at the same level gives the same name from both tools.

/** Hex digits of the SHA-256 in the name: 48 bits, so two versions of one name collide with odds ~1e-14. */
export const VERSION_HASH_LENGTH = 12;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** `name` without a trailing `.tar.gz` (so `resnet` and `resnet.tar.gz` name the same archive). */
export function archiveBaseName(name: string): string {
  return name.endsWith('.tar.gz') ? name.slice(0, -'.tar.gz'.length) : name;
}

/** The versioned TargetModel of archive `name` whose bytes hash to `sha256` (64 lower-case hex digits). */
export function versionedTargetModel(name: string, sha256: string): string {
  if (!SHA256_HEX.test(sha256)) throw new Error(`'${sha256}' is not a SHA-256 in lower-case hex.`);
  return `${archiveBaseName(name)}-${sha256.slice(0, VERSION_HASH_LENGTH)}.tar.gz`;
}

/**
 * A regular expression (source text, anchored) matching the keys of every version of archive `name` under `prefix`
 * and nothing else: another archive whose name merely starts with `name-` has a different shape.
 */
export function versionedKeyPattern(prefix: string, name: string): string {
  return `^${escapeRegExp(prefix + archiveBaseName(name))}-[0-9a-f]{${VERSION_HASH_LENGTH}}\\.tar\\.gz$`;
}

/** The archive name and version hash of a versioned TargetModel, or undefined when it is not one. */
export function parseVersionedTargetModel(targetModel: string): { name: string; hash: string } | undefined {
  const match = new RegExp(`^(.+)-([0-9a-f]{${VERSION_HASH_LENGTH}})\\.tar\\.gz$`).exec(targetModel);
  return match ? { name: match[1]!, hash: match[2]! } : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
