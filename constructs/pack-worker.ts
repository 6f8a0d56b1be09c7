// How ModelArchive starts its packing worker (constructs/model-archive-worker.ts), a child process because CDK
// bundling is synchronous and the packer is stream-based.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { projectPath } from './project-path';

/**
 * The node arguments that start the packing worker, before the worker's own. From dist/: the built worker beside
 * `moduleFile`. From the sources (ts-jest, or a checkout's `cdk synth` through tsx): the built worker in dist/ too
 * when the checkout's scripts/build.js finds dist/ current (no source newer than the build), the same code without
 * tsx compiling it again (about 0.7 s of CPU less per archive); otherwise the source worker through tsx.
 */
export function packWorkerArgs(moduleFile: string, root: string = projectPath()): string[] {
  if (!moduleFile.endsWith('.ts')) return [join(dirname(moduleFile), 'model-archive-worker.js')];
  const built = join(root, 'dist', 'constructs', 'model-archive-worker.js');
  const build = join(root, 'scripts', 'build.js');
  if (existsSync(built) && existsSync(build)) {
    // The checkout's own build script: the package has no scripts/, but it runs from dist/ and never gets here.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { staleReason } = require(build) as { staleReason: (root: string) => string | undefined };
    if (staleReason(root) === undefined) return [built];
  }
  return ['--import', 'tsx', join(dirname(moduleFile), 'model-archive-worker.ts')];
}
