#!/usr/bin/env node
// The installed `mme-deploy` command: starts the bundled CLI (mme-deploy-cli.js: bin/mme-deploy.ts bundled by
// scripts/bundle-cli.js) from the V8 code cache the build wrote beside it, so that node does not parse and compile its
// 800 KB again at every start (bench/startup.js).
//
// V8 itself refuses a cache made by another V8 version or with other V8 flags, but it knows the source only by its
// length (v8/v8:src/snapshot/code-serializer.cc, SerializedCodeData::SourceHash; nodejs/node#22152 and
// electron/electron#51930 add a hash of the source for that reason): a bundle edited in place to the same length
// would run the build's code for every function the cache holds. So the cache file starts with the CRC-32 of the
// bundle it was made for, and is used only for a bundle with that CRC-32: about 4 ms, loading node:zlib included
// (a SHA-256 took about 7, loading node:crypto included), where the cache saves 15 to 20 ms. Neither the time of the
// files (npm installs a package with new times, in the tarball's order) nor a build id in the bundle (an edit keeps
// it) would tell an edited bundle.
// Without a usable cache the CLI is compiled from its source, as `require` would, and runs the same.

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import * as zlib from 'node:zlib';

/** The bundled CLI, beside this file. */
export const CLI_FILE = join(__dirname, 'mme-deploy-cli.js');
/** Its code cache: the bundle's CRC-32 (CHECK_LENGTH hex digits), then V8's data. */
export const CACHE_FILE = join(__dirname, 'mme-deploy-cli.cache');
/**
 * When set, the path this run writes a code cache to as it exits. The build runs `--help` with it, so that the cache
 * holds, compiled, what runs at every start: commander and the command definitions.
 */
export const WRITE_CACHE_VARIABLE = 'MME_DEPLOY_WRITE_CODE_CACHE';
/** The cache's header: the bundle's CRC-32 in 8 hex digits (V8's data after it stays 8-byte aligned). */
const CHECK_LENGTH = 8;

/**
 * What became of the code cache: used; refused by V8 (another node, other flags); made for another bundle; not
 * checked (a node before 20.15 has no zlib.crc32, and runs without it); or none.
 */
export type CacheUse = 'used' | 'rejected' | 'stale' | 'unchecked' | 'missing';

export interface CompiledCli {
  readonly script: Script;
  readonly cache: CacheUse;
  /** The header a cache made for this bundle starts with; undefined when this node cannot compute it. */
  readonly check: string | undefined;
}

/** The bundle's CRC-32 as the cache's header, or undefined when this node has no zlib.crc32. */
function checkOf(bytes: Buffer): string | undefined {
  const crc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  return crc32 === undefined ? undefined : crc32(bytes).toString(16).padStart(CHECK_LENGTH, '0');
}

/** The CLI compiled, from the cache when it was made for this bundle. */
export function compileCli(): CompiledCli {
  const bytes = readFileSync(CLI_FILE);
  let cache: Buffer | undefined;
  try {
    cache = readFileSync(CACHE_FILE);
  } catch {
    // No cache: compiled from the source alone.
  }
  const check = checkOf(bytes);
  const fits = cache !== undefined && check !== undefined && cache.toString('latin1', 0, CHECK_LENGTH) === check;
  // The file is the CLI wrapped as node wraps a CommonJS module: one function of the module's five variables.
  const script = new Script(bytes.toString('utf8'), {
    filename: CLI_FILE,
    ...(fits ? { cachedData: cache!.subarray(CHECK_LENGTH) } : {}),
  });
  const use: CacheUse =
    cache === undefined ? 'missing' : check === undefined ? 'unchecked' : !fits ? 'stale' : script.cachedDataRejected ? 'rejected' : 'used';
  return { script, cache: use, check };
}

/** Compiles and runs the CLI, which reads process.argv and sets the exit code itself. */
export function launch(): void {
  const { script, check } = compileCli();
  const cacheOut = process.env[WRITE_CACHE_VARIABLE];
  // Not passed on to the processes the CLI starts.
  delete process.env[WRITE_CACHE_VARIABLE];
  if (cacheOut && check !== undefined) {
    process.on('exit', () => writeFileSync(cacheOut, Buffer.concat([Buffer.from(check, 'latin1'), script.createCachedData()])));
  }
  const module = { exports: {} };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(module.exports, createRequire(CLI_FILE), module, CLI_FILE, __dirname);
}

if (require.main === module) launch();
