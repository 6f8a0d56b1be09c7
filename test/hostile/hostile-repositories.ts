// Crafted model repositories an attacker could put in a pull request, written by code (never stored as blobs): links
// out of the repository to a secret, names holding DEL and newlines, an oversized sparse config.pbtxt.
// `npx tsx test/hostile/hostile-repositories.ts <dir>` writes them all there, to try them by hand.
import { closeSync, ftruncateSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLOAT, onnxModel } from '../model-files/onnx-writer';

/** What the secret file holds: a test fails when any output shows it. */
export const SECRET = 'AWS_SECRET_ACCESS_KEY=hostile-test-secret-0123456789';

/** A line a hostile name tries to forge on stderr. */
export const FORGED = 'mme-deploy: FORGED all checks passed';

export const ONNX_CONFIG = `backend: "onnxruntime"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
`;

/** One valid ONNX model directory `name` under `repo`. */
export function onnxModelDir(repo: string, name: string): void {
  mkdirSync(join(repo, name, '1'), { recursive: true });
  writeFileSync(join(repo, name, 'config.pbtxt'), ONNX_CONFIG);
  writeFileSync(join(repo, name, '1', 'model.onnx'), onnxModel([['x', FLOAT, ['batch', 2]]], [['y', FLOAT, ['batch', 2]]]));
}

/** A secret file outside every repository below `base`, and the directory holding it. */
export function secretOutside(base: string): { dir: string; file: string } {
  const dir = join(base, 'home', '.aws');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'credentials');
  writeFileSync(file, `${SECRET}\n`);
  writeFileSync(join(dir, 'config.pbtxt'), `${SECRET}\n`);
  return { dir, file };
}

export type HostileRepository =
  | 'config-link'
  | 'model-dir-link'
  | 'python-link'
  | 'version-dir-link'
  | 'del-name'
  | 'newline-name'
  | 'sparse-config';

/** Writes the crafted repository `kind` as `<base>/<kind>` and returns its path. */
export function hostileRepository(base: string, kind: HostileRepository): string {
  const repo = join(base, kind);
  const secret = secretOutside(base);
  mkdirSync(repo, { recursive: true });
  switch (kind) {
    case 'config-link':
      // config.pbtxt -> ~/.aws/credentials: its first line would be the caret excerpt of a parse error.
      mkdirSync(join(repo, 'm', '1'), { recursive: true });
      writeFileSync(join(repo, 'm', '1', 'model.onnx'), 'x');
      symlinkSync(secret.file, join(repo, 'm', 'config.pbtxt'));
      break;
    case 'model-dir-link':
      // The model directory itself leads out: its config.pbtxt is a regular file, outside.
      symlinkSync(secret.dir, join(repo, 'm'));
      break;
    case 'python-link':
      // A python model whose model.py is the secret: auto-complete rules read model.py and quote it.
      mkdirSync(join(repo, 'p', '1'), { recursive: true });
      writeFileSync(join(repo, 'p', 'config.pbtxt'), 'backend: "python"\nmax_batch_size: 0\n');
      symlinkSync(secret.file, join(repo, 'p', '1', 'model.py'));
      break;
    case 'version-dir-link': {
      // The version directory leads out, to a directory whose model.py is the secret: model.py itself is no link.
      const outside = join(base, 'outside-version');
      mkdirSync(outside, { recursive: true });
      writeFileSync(join(outside, 'model.py'), `${SECRET}\n`);
      mkdirSync(join(repo, 'p'), { recursive: true });
      writeFileSync(join(repo, 'p', 'config.pbtxt'), 'backend: "python"\nmax_batch_size: 0\n');
      symlinkSync(outside, join(repo, 'p', '1'));
      break;
    }
    case 'del-name':
      // DEL (0x7f) in a model name and in a config string.
      onnxModelDir(repo, 'net\x7fdel');
      writeFileSync(join(repo, 'net\x7fdel', 'config.pbtxt'), `name: "other\x7f"\n${ONNX_CONFIG}`);
      break;
    case 'newline-name':
      // A model directory whose name ends in a newline and a forged line.
      onnxModelDir(repo, `net\n${FORGED}`);
      break;
    case 'sparse-config': {
      // 700 MB that take no disk: reading it whole took 54 s and 1.1 GB.
      mkdirSync(join(repo, 'm', '1'), { recursive: true });
      writeFileSync(join(repo, 'm', '1', 'model.onnx'), 'x');
      const fd = openSync(join(repo, 'm', 'config.pbtxt'), 'w');
      ftruncateSync(fd, 700 * 1024 * 1024);
      closeSync(fd);
      break;
    }
  }
  return repo;
}

if (require.main === module) {
  const base = process.argv[2];
  if (!base) throw new Error('usage: tsx test/hostile/hostile-repositories.ts <dir>');
  const kinds: HostileRepository[] = [
    'config-link', 'model-dir-link', 'python-link', 'version-dir-link', 'del-name', 'newline-name', 'sparse-config',
  ];
  for (const kind of kinds) console.log(hostileRepository(base, kind));
}
