// Crafted archives where readers disagree (issue 23 items 6, 9-13), written by code from their parts: what GNU tar
// (SageMaker's extraction) does with each is the oracle the tests compare with.
// `npx tsx test/hostile/hostile-archives.ts <dir>` writes them all there, to try them with tar and bsdtar by hand.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { endOfArchive, paxRecord, TAR_BLOCK } from '../../lib/archive/tar-header';
import { directoryMember, fileMember, member, paxMember, tarOf, withChecksum } from '../archive/crafted-archives';

const CONFIG = 'backend: "python"\nmax_batch_size: 0\n';
const base = () => [directoryMember('m'), fileMember('m/config.pbtxt', CONFIG), directoryMember('m/1')];

export const HOSTILE_ARCHIVES = {
  /** A valid archive, then a zero byte and a damaged gzip member: gzip -t says "trailing garbage", GNU tar fails. */
  'trailing-garbage': () => {
    const gz = gzipSync(tarOf(...base(), fileMember('m/1/model.py', 'pass\n')));
    const damaged = Buffer.from(gz);
    damaged[damaged.length - 6]! ^= 0xff;
    return Buffer.concat([gz, Buffer.from([0]), damaged]);
  },
  /** The same archive padded with zeros after the member, which gzip and GNU tar accept. */
  'trailing-zeros': () => Buffer.concat([gzipSync(tarOf(...base(), fileMember('m/1/model.py', 'pass\n'))), Buffer.alloc(1000)]),
  /** A symbolic link, then a regular file of the same name: GNU tar keeps the file (the last entry wins). */
  'link-then-file': () =>
    gzipSync(tarOf(...base(), member({ name: 'm/1/model.py', typeflag: '2', linkName: 'other.py' }), fileMember('m/1/other.py', 'pass\n'),
      fileMember('m/1/model.py', 'class TritonPythonModel: pass\n'))),
  /** The same with a link whose target has a ".." segment: GNU tar makes such links last, so the link wins. */
  'dotdot-link-then-file': () =>
    gzipSync(tarOf(...base(), member({ name: 'm/1/model.py', typeflag: '2', linkName: '../config.pbtxt' }),
      fileMember('m/1/model.py', 'class TritonPythonModel: pass\n'))),
  /** Typeflag X (an old POSIX extended header) naming the next entry; its own name field is a decoy. */
  'typeflag-X': () => {
    const records = paxRecord('path', 'm/1/model.py');
    return gzipSync(tarOf(...base(), member({ name: 'PaxHeader', typeflag: 'X', size: Buffer.byteLength(records) }, records),
      member({ name: 'm/1/decoy.py', size: 5 }, 'pass\n')));
  },
  /** A global ('g') header's size=30 for a member whose own size field says 5: GNU tar reads 30 bytes of data. */
  'global-size': () => {
    const records = paxRecord('size', '30');
    return gzipSync(tarOf(...base(), member({ name: 'GlobalHead', typeflag: 'g', size: Buffer.byteLength(records) }, records),
      member({ name: 'm/1/model.py', size: 5 }, 'class TritonPythonModel: pass\n')));
  },
  /** A GNU.sparse.major record that is no number: GNU tar says "Malformed extended header" and fails. */
  'bad-sparse-record': () =>
    gzipSync(tarOf(...base(), paxMember({ 'GNU.sparse.major': 'x' }), fileMember('m/1/model.py', 'pass\n'))),
  /** An entry with a ".." segment. */
  'dot-dot': () => gzipSync(tarOf(...base(), fileMember('m/../../evil.py', 'pass\n'))),
  /** A symbolic link that leads out of the archive. */
  'link-out': () => gzipSync(tarOf(...base(), member({ name: 'm/1/model.py', typeflag: '2', linkName: '../../../etc/passwd' }))),
  /** A character device. */
  'device': () => gzipSync(tarOf(...base(), member({ name: 'm/1/tty', typeflag: '3' }))),
  /** A file 10,000 directories deep (a PAX path): extraction used to overflow the stack. */
  'deep-path': () => gzipSync(tarOf(...base(), paxMember({ path: `m/1/${'d/'.repeat(10_000)}f` }), member({ name: 'f', size: 1 }, 'x'))),
  /** 100,000 top-level directories: `local load` spent minutes on them, then printed every name on one line. */
  'many-top-level': () => gzipSync(manyDirectories(100_000)),
} as const;

/**
 * The tar of `count` top-level directories d0, d1, ...: the bytes of tarOf(directoryMember('d0'), ...), made from one
 * encoded header whose name (`d<i>/`, as encodeHeaders writes a directory's) and checksum are patched in place, the
 * checksum from the template's by the bytes of the name that changed (encoding and joining 100,000 headers one by one,
 * each checksum summed over its 512 bytes, took 2 s of CPU).
 */
export function manyDirectories(count: number): Buffer {
  const template = withChecksum(directoryMember('d0'));
  if (template.length !== TAR_BLOCK) throw new Error('a directory header is one block');
  const nameSum = (name: string) => [...Buffer.from(name, 'latin1')].reduce((sum, byte) => sum + byte, 0);
  // withChecksum's sum: the header's bytes with the checksum field read as spaces.
  const base = template.reduce((sum, byte, i) => sum + (i >= 148 && i < 156 ? 0x20 : byte), 0) - nameSum('d0/');
  const end = endOfArchive(count * TAR_BLOCK);
  const tar = Buffer.alloc(count * TAR_BLOCK + end.length);
  end.copy(tar, count * TAR_BLOCK);
  for (let i = 0; i < count; i++) {
    const at = i * TAR_BLOCK;
    const name = `d${i}/`;
    template.copy(tar, at);
    tar.write(name, at, 100, 'latin1');
    tar.write(`${(base + nameSum(name)).toString(8).padStart(6, '0')}\u0000 `, at + 148, 8, 'latin1');
  }
  return tar;
}

export type HostileArchive = keyof typeof HOSTILE_ARCHIVES;

export function writeHostileArchive(dir: string, name: HostileArchive): string {
  const path = join(dir, `${name}.tar.gz`);
  writeFileSync(path, HOSTILE_ARCHIVES[name]());
  return path;
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: tsx test/hostile/hostile-archives.ts <dir>');
  for (const name of Object.keys(HOSTILE_ARCHIVES) as HostileArchive[]) console.log(writeHostileArchive(dir, name));
}
