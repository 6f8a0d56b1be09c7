// The cases of the differential archive fuzz (tar-differential.fuzz.test.ts): seed archives (small model archives our
// own writer produced, and crafted ones: PAX and GNU long names, links, typeflag X, a link then a file of the same
// name), and mutations made deterministically from a seed: the reader fuzz's byte flips, cuts and header field
// mutations (test/archive/fuzz-cases.ts), plus tar truncation, members appended before or after the end blocks, PAX
// records put before a member, and the tar split across gzip members, with zeros, garbage or damage at the joins.

import { gunzipSync, gzipSync } from 'node:zlib';
import { paxRecord, TAR_BLOCK } from '../../lib/archive/tar-header';
import type { RandomSource } from '../../lib/plan/seeded-random';
import { baseArchives, headerOffsets, makeCase } from '../archive/fuzz-cases';
import { directoryMember, fileMember, member, paxMember, sampleModelTar } from '../archive/crafted-archives';
import { HOSTILE_ARCHIVES } from './hostile-archives';

export interface Seed {
  readonly name: string;
  /** The uncompressed tar. */
  readonly tar: Buffer;
  /** Offsets of its header blocks. */
  readonly headers: number[];
}

export interface DifferentialCase {
  readonly description: string;
  /** The .tar.gz bytes. */
  readonly bytes: Buffer;
}

/**
 * The seeds: `written` are tar.gz files our writer produced (createTarGzStream, made by the test before the run),
 * then the crafted ones, the same on every run.
 */
export function seeds(written: ReadonlyArray<{ name: string; gz: Buffer }>): Seed[] {
  const crafted: Array<[string, Buffer]> = [
    ...written.map(({ name, gz }): [string, Buffer] => [name, gunzipSync(gz)]),
    ['sample-model', sampleModelTar()],
    ...baseArchives().slice(1).map(({ tar }, i): [string, Buffer] => [`reader-fuzz-base-${i + 1}`, tar]),
    ['typeflag-X', gunzipSync(HOSTILE_ARCHIVES['typeflag-X']())],
    ['link-then-file', gunzipSync(HOSTILE_ARCHIVES['link-then-file']())],
  ];
  return crafted.map(([name, tar]) => ({ name, tar, headers: headerOffsets(tar) }));
}

/** Members a mutation may add: honest ones and ones an extractor must refuse. */
const EXTRA_MEMBERS: ReadonlyArray<[string, () => Buffer]> = [
  ['a file', () => fileMember('m/1/extra.py', 'pass\n')],
  ['a directory', () => directoryMember('m/extra')],
  ['a link inside', () => member({ name: 'm/1/alias.py', typeflag: '2', linkName: 'model.py' })],
  ['a link out', () => member({ name: 'm/1/out.py', typeflag: '2', linkName: '../../../etc/passwd' })],
  ['a hard link to nothing', () => member({ name: 'm/1/hard.py', typeflag: '1', linkName: 'm/1/missing.py' })],
  ['a ".." path', () => fileMember('m/../../evil.py', 'pass\n')],
  ['an absolute path', () => fileMember('/tmp/evil.py', 'pass\n')],
  ['a FIFO', () => member({ name: 'm/1/fifo', typeflag: '6' })],
  ['a replacement of config.pbtxt', () => fileMember('m/config.pbtxt', 'name: "other"\n')],
];

/** PAX records a mutation may put before a member: honest, hostile and malformed ones. */
const PAX_RECORDS: ReadonlyArray<string> = [
  paxRecord('path', 'm/1/renamed.py'),
  paxRecord('path', '../escape.py'),
  paxRecord('path', ''),
  paxRecord('linkpath', '/etc/passwd'),
  paxRecord('size', '0'),
  paxRecord('size', '100'),
  paxRecord('size', '99999999999999999999'),
  paxRecord('size', '-1'),
  paxRecord('size', '12x'),
  paxRecord('mtime', '1700000000.5'),
  paxRecord('uid', '0'),
  paxRecord('comment', 'x'.repeat(300)),
  paxRecord('GNU.sparse.major', '1'),
  paxRecord('GNU.sparse.major', 'x'),
  paxRecord('GNU.sparse.map', '0,1,2'),
  paxRecord('GNU.sparse.name', 'm/1/sparse.bin'),
  '5 a=\n',
  '99 path=short\n',
  'x path=y\n',
  '11 path=abc',
  '',
];

export function makeDifferentialCase(random: RandomSource, seedList: readonly Seed[]): DifferentialCase {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const int = (n: number) => Math.floor(random() * n);
  const seed = pick(seedList);
  const kind = int(9);
  if (kind < 4) {
    // The reader fuzz's mutations: gzip flips and cuts, tar flips, header fields with the checksum made right.
    const fuzz = makeCase(random, [seed]);
    return { description: `${seed.name}: ${fuzz.description}`, bytes: fuzz.bytes };
  }
  if (kind === 4) {
    const aligned = random() < 0.5;
    const length = aligned ? TAR_BLOCK * int(seed.tar.length / TAR_BLOCK) : int(seed.tar.length);
    return { description: `${seed.name}: tar cut to ${length} of ${seed.tar.length} bytes`, bytes: gzipSync(seed.tar.subarray(0, length)) };
  }
  if (kind === 5) {
    // A member after the last one (before the end blocks), or after the end blocks, where readers stop.
    const [what, make] = pick(EXTRA_MEMBERS);
    const end = endOfEntries(seed);
    const afterEnd = random() < 0.3;
    const extra = make();
    const tar = afterEnd
      ? Buffer.concat([seed.tar, extra])
      : Buffer.concat([seed.tar.subarray(0, end), extra, Buffer.alloc(2 * TAR_BLOCK)]);
    const where = afterEnd ? 'after the end blocks' : 'as the last member';
    return { description: `${seed.name}: ${what} appended ${where}`, bytes: gzipSync(tar) };
  }
  if (kind === 6) {
    // PAX records (an 'x', 'g' or old 'X' header) put before one of the members.
    const at = pick(seed.headers);
    const records = Array.from({ length: 1 + int(3) }, () => pick(PAX_RECORDS)).join('');
    const typeflag = pick(['x', 'x', 'g', 'X']);
    const data = Buffer.from(records, 'utf8');
    const header = typeflag === 'x' ? paxMember(records) : member({ name: 'PaxHeader', typeflag, size: data.length }, data);
    const tar = Buffer.concat([seed.tar.subarray(0, at), header, seed.tar.subarray(at)]);
    const description = `${seed.name}: '${typeflag}' header ${JSON.stringify(records)} before the header at ${at}`;
    return { description, bytes: gzipSync(tar) };
  }
  // The tar split across gzip members, and what may come between or after them.
  const cut = int(seed.tar.length + 1);
  const first = gzipSync(seed.tar.subarray(0, cut));
  const second = gzipSync(seed.tar.subarray(cut));
  const join = pick(['nothing', 'zeros', 'one zero', 'garbage', 'flipped trailer', 'cut member', 'empty member']);
  let bytes: Buffer;
  if (join === 'nothing') bytes = Buffer.concat([first, second]);
  else if (join === 'zeros') bytes = Buffer.concat([first, second, Buffer.alloc(1 + int(1024))]);
  else if (join === 'one zero') bytes = Buffer.concat([first, Buffer.from([0]), second]);
  else if (join === 'garbage') bytes = Buffer.concat([first, second, Buffer.from('garbage after the members')]);
  else if (join === 'flipped trailer') {
    const damaged = Buffer.from(second);
    damaged[damaged.length - 1 - int(8)]! ^= 1 + int(255);
    bytes = Buffer.concat([first, damaged]);
  } else if (join === 'cut member') bytes = Buffer.concat([first, second.subarray(0, int(second.length))]);
  else bytes = Buffer.concat([first, gzipSync(Buffer.alloc(0)), second]);
  return { description: `${seed.name}: two gzip members split at tar byte ${cut}, ${join} at the join or end`, bytes };
}

/** Where the end-of-archive blocks of a seed begin: after its last member's data. */
function endOfEntries(seed: Seed): number {
  let at = 0;
  for (let i = seed.tar.length - TAR_BLOCK; i >= 0; i -= TAR_BLOCK) {
    if (!seed.tar.subarray(i, i + TAR_BLOCK).every((b) => b === 0)) {
      at = i + TAR_BLOCK;
      break;
    }
  }
  return at;
}
