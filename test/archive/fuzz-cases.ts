// The fuzz cases of the archive reader: mutated archives made deterministically from a seed, and the checks run on
// each (see tar-reader.fuzz.test.ts, which runs them in a child process so that even a busy loop is caught).

import { lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { extractTarGz, readTarGz } from '../../lib/archive/tar-reader';
import { TAR_BLOCK, paxRecord } from '../../lib/archive/tar-header';
import { isMmeError } from '../../lib/errors';
import { isInside } from '../../lib/paths';
import type { RandomSource } from '../../lib/plan/seeded-random';
import { directoryMember, fileMember, member, paxMember, sampleModelTar, tarOf, withChecksum } from './crafted-archives';

/**
 * Every this many cases, the mutated archive is also extracted and the sandbox checked for escapes; every other time
 * with `links: 'inside'` (as `local load` extracts), which creates the links that stay inside.
 */
const EXTRACT_EVERY = 4;

/** The archives the mutations start from, with the byte offsets of their header blocks. */
export function baseArchives(): { tar: Buffer; headers: number[] }[] {
  const bases = [
    sampleModelTar(),
    tarOf(
      paxMember(paxRecord('path', `m/${'deep/'.repeat(25)}w.bin`) + paxRecord('size', '1500')),
      member({ name: 'placeholder', size: 0 }, Buffer.alloc(1500, 3)),
      member({ name: '././@LongLink', typeflag: 'L', size: 130 }, `m/${'n'.repeat(120)}.txt\u0000`),
      fileMember('ignored-name', 'long named'),
      member({ name: 'm/link', typeflag: '2', linkName: 'config.pbtxt' }),
      directoryMember('m/1'),
      fileMember('m/config.pbtxt', 'name: "m"\n'),
      member({ name: 'm/1/hard', typeflag: '1', linkName: 'm/config.pbtxt' }),
      member({ name: 'm/1/up', typeflag: '2', linkName: '../config.pbtxt' }),
    ),
    tarOf(
      member({ name: 'config.pbtxt', size: 9, prefix: 'model' }, 'name: "m"'),
      fileMember('model/1/model.onnx', Buffer.alloc(3000, 0x5a)),
    ),
  ];
  return bases.map((tar) => ({ tar, headers: headerOffsets(tar) }));
}

/** Offsets of the header blocks of a well-formed tar (walking sizes, as a reader would). */
export function headerOffsets(tar: Buffer): number[] {
  const offsets: number[] = [];
  let at = 0;
  let paxSize: number | undefined;
  while (at + TAR_BLOCK <= tar.length && !tar.subarray(at, at + TAR_BLOCK).every((b) => b === 0)) {
    offsets.push(at);
    const type = String.fromCharCode(tar[at + 156]!);
    let size = Number.parseInt(tar.toString('latin1', at + 124, at + 136), 8);
    if (type === 'x') paxSize = Number(/size=(\d+)/.exec(tar.toString('latin1', at + 512, at + 512 + size))?.[1] ?? NaN);
    else if (type !== 'L' && !Number.isNaN(paxSize ?? NaN)) [size, paxSize] = [paxSize!, undefined];
    else paxSize = undefined;
    if (type === '5' || type === '2' || type === '1') size = 0;
    at += TAR_BLOCK + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
  }
  return offsets;
}

/** Header fields by offset and length, and what a mutation may write into them. */
const FIELDS: [name: string, offset: number, length: number][] = [
  ['name', 0, 100],
  ['mode', 100, 8],
  ['size', 124, 12],
  ['typeflag', 156, 1],
  ['linkname', 157, 100],
  ['magic', 257, 8],
  ['prefix', 345, 155],
];
const NASTY_TEXT = ['../', '..', '/', '\\', 'C:', '\u0000', '\u00ff', ' ', '9', '7', '0', '-', 'x', '\u0080', '\u00ff\u00ff'];
const TYPEFLAGS = ['0', '1', '2', '3', '4', '5', '6', '7', 'x', 'g', 'L', 'K', 'S', 'Z', 'D', 'M', 'V', '\u0000', '\u00ff'];

export interface Case {
  readonly description: string;
  readonly bytes: Buffer;
  /** The uncompressed tar the case was made from, when the gzip stream alone was mutated. */
  readonly gzipOf?: Buffer;
  /** Whether the reader must refuse it whatever it holds (a cut gzip stream). */
  readonly mustReject: boolean;
}

export function makeCase(random: RandomSource, bases: ReturnType<typeof baseArchives>): Case {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const int = (n: number) => Math.floor(random() * n);
  /** A copy of `data` with `count` bytes changed (each XORed with 1-255), and where, for the description. */
  const flipBytes = (data: Buffer, count: number) => {
    const bytes = Buffer.from(data);
    const at: number[] = [];
    for (let i = 0; i < count; i++) {
      const position = int(data.length);
      bytes[position] ^= 1 + int(255);
      at.push(position);
    }
    return { bytes, at: at.join(',') };
  };
  const base = pick(bases);
  const kind = int(5);
  if (kind === 0) {
    const gz = gzipOf(base.tar, pick([0, 1, 6, 9]));
    const { bytes, at } = flipBytes(gz, 1 + int(3));
    return { description: `gzip flips at ${at} of ${gz.length}`, bytes, gzipOf: base.tar, mustReject: false };
  }
  if (kind === 1) {
    const gz = gzipOf(base.tar, pick([0, 6]));
    const length = int(gz.length);
    return { description: `gzip cut to ${length} of ${gz.length} bytes`, bytes: gz.subarray(0, length), mustReject: true };
  }
  if (kind === 2) {
    const { bytes, at } = flipBytes(base.tar, 1 + int(4));
    return { description: `tar flips at ${at}`, bytes: gzipSync(bytes, { level: 1 }), mustReject: false };
  }
  // Header mutations with a recomputed checksum, one to three fields of one header.
  const tar = Buffer.from(base.tar);
  const header = pick(base.headers);
  const changes: string[] = [];
  for (let n = 1 + int(3); n > 0; n--) {
    const [name, offset, length] = pick(FIELDS);
    const start = header + offset;
    let value: Buffer;
    if (name === 'typeflag') {
      value = Buffer.from(pick(TYPEFLAGS), 'latin1');
    } else if (name === 'size' && random() < 0.5) {
      const variants = [
        Buffer.from(`${int(2 ** 33).toString(8).padStart(11, '0')}\u0000`, 'latin1'),
        Buffer.concat([Buffer.from([0x80 | int(0x80)]), Buffer.from(Array.from({ length: 11 }, () => int(256)))]),
        Buffer.from(`${'0'.repeat(int(11))}${pick(NASTY_TEXT)}`, 'latin1'),
      ];
      value = pick(variants);
    } else if (kind === 3) {
      value = Buffer.from(Array.from({ length: 1 + int(length) }, () => int(256)));
    } else {
      value = Buffer.from(Array.from({ length: 1 + int(4) }, () => pick(NASTY_TEXT)).join(''), 'latin1');
    }
    const into = int(Math.max(1, length - value.length + 1));
    value.copy(tar, start + into, 0, Math.min(value.length, length - into));
    changes.push(`${name}@${into}=${JSON.stringify(value.toString('latin1'))}`);
  }
  withChecksum(tar.subarray(header, header + TAR_BLOCK));
  return { description: `header at ${header}: ${changes.join(' ')}`, bytes: gzipSync(tar, { level: 1 }), mustReject: false };
}

/**
 * A base archive gzipped at `level`, made once: two cases in five start from one (the same bytes every time, as zlib's
 * output depends only on its input and level); compressing it anew took a quarter of the time making 5000 cases took.
 * Callers copy before they change it.
 */
function gzipOf(tar: Buffer, level: number): Buffer {
  let byLevel = gzipped.get(tar);
  if (!byLevel) gzipped.set(tar, (byLevel = new Map()));
  let gz = byLevel.get(level);
  if (!gz) byLevel.set(level, (gz = gzipSync(tar, { level })));
  return gz;
}
const gzipped = new WeakMap<Buffer, Map<number, Buffer>>();

/** Reads every entry and all its content; resolves with what was read, or the error. */
export async function readAll(bytes: Buffer): Promise<{ entries: string[]; error?: unknown }> {
  const entries: string[] = [];
  try {
    await readTarGz(Readable.from([bytes]), async (entry, content) => {
      let size = 0;
      for await (const chunk of content) size += (chunk as Buffer).length;
      entries.push(`${entry.type} ${entry.path} ${size} ${entry.linkName ?? ''}`);
    });
    return { entries };
  } catch (error) {
    return { entries, error };
  }
}

function isDomainError(err: unknown): boolean {
  return isMmeError(err) && (err.code.startsWith('TAR_') || err.code === 'UNREADABLE');
}

/** Every path below `dir`, with symbolic links marked. */
function listTree(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const rel = prefix ? `${prefix}/${name}` : name;
    const stats = lstatSync(join(dir, name));
    out.push(stats.isSymbolicLink() ? `${rel} -> link` : rel);
    if (stats.isDirectory()) out.push(...listTree(join(dir, name), rel));
  }
  return out;
}

/**
 * Links below `out` that lead outside it: a symbolic link whose target (followed on disk, or by path arithmetic when it
 * dangles) is not below `out`, or a file with more hard links than `out` holds (one shares its inode with a file
 * elsewhere).
 */
function linksLeaving(out: string): string[] {
  const leaving: string[] = [];
  const inodes = new Map<number, { nlink: number; seen: number; path: string }>();
  for (const entry of listTree(out)) {
    const rel = entry.replace(/ -> link$/, '');
    const path = join(out, rel);
    if (entry.endsWith(' -> link')) {
      let target: string;
      try {
        target = realpathSync(path);
      } catch {
        target = resolve(dirname(path), readlinkSync(path));
      }
      if (!isInside(realpathSync(out), target)) leaving.push(`${rel} -> ${readlinkSync(path)}`);
      continue;
    }
    const stats = lstatSync(path);
    if (!stats.isFile()) continue;
    const known = inodes.get(stats.ino) ?? { nlink: stats.nlink, seen: 0, path: rel };
    known.seen++;
    inodes.set(stats.ino, known);
  }
  for (const inode of inodes.values()) if (inode.seen < inode.nlink) leaving.push(`${inode.path} (hard link)`);
  return leaving;
}

export type Outcome = 'accepted' | 'rejected';

/**
 * Runs one case: reads it whole, checks the outcome, and every EXTRACT_EVERY cases extracts it into `jail/out` and
 * checks that nothing appeared elsewhere in `jail`. Returns the outcome and any failures, described with `label`.
 */
export async function runCase(
  fuzz: Case,
  index: number,
  jail: string,
  originals: ReadonlyMap<Buffer, string[]>,
): Promise<{ outcome: Outcome; failures: string[] }> {
  const label = `case ${index} (${fuzz.description})`;
  const failures: string[] = [];
  const read = await readAll(fuzz.bytes);
  if (read.error === undefined) {
    if (fuzz.mustReject) failures.push(`ACCEPTED a cut gzip stream: ${label}`);
    // A flip in the gzip stream may only go unnoticed where gzip stores nothing that matters (MTIME, XFL, OS, the
    // FTEXT flag, padding bits): what was read must then be exactly the original.
    if (fuzz.gzipOf && !gunzipSync(fuzz.bytes).equals(fuzz.gzipOf)) failures.push(`ACCEPTED corrupted gzip: ${label}`);
    if (fuzz.gzipOf && JSON.stringify(read.entries) !== JSON.stringify(originals.get(fuzz.gzipOf))) {
      failures.push(`ACCEPTED different entries from a gzip flip: ${label}`);
    }
  } else if (!isDomainError(read.error)) {
    failures.push(`NON-DOMAIN error ${String((read.error as Error)?.stack ?? read.error)}: ${label}`);
  }
  if (index % EXTRACT_EVERY === 0) {
    rmSync(jail, { recursive: true, force: true });
    mkdirSync(jail);
    const archive = join(jail, 'archive.tar.gz');
    writeFileSync(archive, fuzz.bytes);
    const out = join(jail, 'out');
    const withLinks = (index / EXTRACT_EVERY) % 2 === 1;
    try {
      await extractTarGz(archive, out, withLinks ? { links: 'inside' } : {});
    } catch (err) {
      if (!isDomainError(err)) failures.push(`NON-DOMAIN extraction error ${String((err as Error)?.stack ?? err)}: ${label}`);
    }
    const escaped = listTree(jail).filter((p) => p !== 'archive.tar.gz' && p !== 'out' && !p.startsWith('out/'));
    const links = withLinks ? linksLeaving(out) : listTree(out).filter((p) => p.endsWith('-> link'));
    if (escaped.length > 0 || links.length > 0) failures.push(`ESCAPE ${[...escaped, ...links].join(', ')}: ${label}`);
  }
  return { outcome: read.error === undefined ? 'accepted' : 'rejected', failures };
}
