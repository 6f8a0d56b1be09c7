// Child process of tar-differential.fuzz.test.ts: runs the differential cases `start`.. of a seed, each judged by our
// reader and extractor, GNU tar (list and extract) and bsdtar (list), and reports each one over IPC once it is done,
// so the parent can kill it when one does not end in time (test/archive/fuzz-watch.ts). The tools run in two shells
// (tar-oracles.ts) a few cases ahead of our reader, which judges each case in turn.
// Usage (by the test, through fuzz-watch.ts): node --require tsx/cjs tar-differential-runner.ts <seed> <count> <sandbox-dir> <start>

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { extractTarGz, readTarGz, type TarEntry } from '../../lib/archive/tar-reader';
import { isMmeError } from '../../lib/errors';
import { seededRandom } from '../../lib/plan/seeded-random';
import { report } from '../archive/fuzz-watch';
import { DifferentialCase, makeDifferentialCase, seeds } from './tar-differential-cases';
import { compareEntries, gnuListing, ListedEntry } from './tar-listing';
import { OracleShell, type ToolStatuses } from './tar-oracles';

/** How long one tool may take on one case of a few KiB (times the load factor): past it, it counts as refusing. */
const TOOL_TIMEOUT_MS = 10_000 * (Number(process.env.MME_TEST_TIMEOUT_SCALE) || 1);

interface Verdicts {
  readonly ours: {
    readonly entries?: ListedEntry[];
    readonly error?: unknown;
    readonly extracted: boolean;
    readonly extractError?: unknown;
  };
  readonly gnuList: { readonly ok: boolean; readonly entries: ListedEntry[] };
  readonly gnuExtract: boolean;
  readonly bsdList: boolean;
}

async function ourEntries(bytes: Buffer): Promise<{ entries?: ListedEntry[]; error?: unknown }> {
  const entries: ListedEntry[] = [];
  try {
    await readTarGz(Readable.from([bytes]), async (entry: TarEntry, content) => {
      for await (const chunk of content) void chunk;
      entries.push({ path: entry.path, kind: kindOf(entry), size: entry.type === 'file' ? entry.size : 0 });
    });
    return { entries };
  } catch (error) {
    return { error };
  }
}

/** Our entry as GNU tar's listing shows its kind: `-` file, `d` directory, `l` symbolic link, `h` hard link, ... */
function kindOf(entry: TarEntry): string {
  // GNU.sparse.* records or the old GNU sparse type flag: see tar-listing.ts.
  if (entry.sparse || entry.typeflag === 'S') return 's';
  if (entry.typeflag === '1') return 'h';
  // A contiguous file ('7'): a file to both, which GNU tar's listing marks 'C'.
  if (entry.typeflag === '7' && entry.type === 'file') return 'C';
  if (entry.type === 'file') return '-';
  if (entry.type === 'directory') return 'd';
  if (entry.type === 'symlink') return 'l';
  return { '3': 'c', '4': 'b', '6': 'p' }[entry.typeflag] ?? '?';
}

function holdsSparseRecords(bytes: Buffer): boolean {
  try {
    return gunzipSync(bytes).includes('GNU.sparse.');
  } catch {
    return false;
  }
}

function isDomainError(err: unknown): boolean {
  return isMmeError(err) && (err.code.startsWith('TAR_') || err.code === 'UNREADABLE' || err.code === 'INVALID');
}

/** How many shells run the oracles, each on every other case: the tools' processes are most of a case's time. */
const SHELLS = 2;
/** How many cases are written ahead of the one being judged, for the shells to work on. */
const AHEAD = 16;

/** Our reader and extractor on a case, and the tools' statuses from its shell. */
async function judge(fuzz: DifferentialCase, dir: string, tools: Promise<ToolStatuses>): Promise<Verdicts> {
  const read = await ourEntries(fuzz.bytes);
  let extracted = false;
  let extractError: unknown;
  try {
    await extractTarGz(join(dir, 'case.tar.gz'), join(dir, 'ours'), { links: 'inside' });
    extracted = true;
  } catch (err) {
    extractError = err;
  }
  const { list, extract, bsd } = await tools;
  return {
    ours: { ...read, extracted, ...(extractError === undefined ? {} : { extractError }) },
    gnuList: { ok: list === 0, entries: list === 0 ? gnuListing(readFileSync(join(dir, 'list'), 'latin1')) : [] },
    // Not run (undefined) only when GNU tar's listing refused and bsdtar's accepted: refusing then changes nothing.
    gnuExtract: extract === 0,
    bsdList: bsd === 0,
  };
}

/** The checks of one case; its outcome is `<ours><GNU tar><bsdtar>`, each `+` (accepted) or `-` (refused), then `=`. */
async function runCase(
  fuzz: DifferentialCase,
  index: number,
  dir: string,
  tools: Promise<ToolStatuses>,
): Promise<{ outcome: string; failures: string[] }> {
  const label = `case ${index} (${fuzz.description})`;
  const v = await judge(fuzz, dir, tools);
  const failures: string[] = [];
  for (const err of [v.ours.error, v.ours.extractError]) {
    if (err !== undefined && !isDomainError(err)) failures.push(`NON-DOMAIN error ${String((err as Error)?.stack ?? err)}: ${label}`);
  }
  const oursAccepts = v.ours.error === undefined;
  if (v.ours.extracted && !v.gnuExtract && !v.bsdList) failures.push(`EXTRACTED what GNU tar and bsdtar both refuse: ${label}`);
  // Sparse members are read as 'other' without decoding their map (tar-listing.ts): reading one both refuse is known,
  // and so is reading a member of another type that GNU.sparse.* records were put before (GNU tar looks for its map).
  const sparse = v.ours.entries?.some((e) => e.kind === 's') === true || holdsSparseRecords(fuzz.bytes);
  if (oursAccepts && !sparse && !v.gnuList.ok && !v.bsdList) failures.push(`ACCEPTED what GNU tar and bsdtar both refuse: ${label}`);
  const comparison = oursAccepts && v.gnuList.ok ? compareEntries(v.ours.entries!, v.gnuList.entries) : undefined;
  if (comparison?.difference) failures.push(`ENTRIES differ from GNU tar's: ${comparison.difference}: ${label}`);
  const sign = (ok: boolean) => (ok ? '+' : '-');
  // `=` when the entry lists were compared.
  const compared = comparison?.compared ? '=' : '';
  return { outcome: `${sign(oursAccepts)}${sign(v.gnuList.ok && v.gnuExtract)}${sign(v.bsdList)}${compared}`, failures };
}

async function main(): Promise<void> {
  const [seed, count, sandbox, start] = process.argv.slice(2);
  const writtenDir = join(sandbox!, 'written');
  const written = readdirSync(writtenDir).sort().map((name) => ({ name, gz: readFileSync(join(writtenDir, name)) }));
  const seedList = seeds(written);
  const random = seededRandom(Number(seed));
  const cases: DifferentialCase[] = [];
  // Cases before `start` are made and dropped, so case N is the same whichever process runs it.
  for (let index = 0; index < Number(count); index++) {
    const fuzz = makeDifferentialCase(random, seedList);
    if (index >= Number(start)) cases.push(fuzz);
  }
  const first = Number(start);
  const work = join(sandbox!, `cases-${process.pid}`);
  const shells = Array.from({ length: SHELLS }, () => new OracleShell(work, TOOL_TIMEOUT_MS));
  const shellOf = (index: number) => shells[index % SHELLS]!;
  const caseDir = (index: number) => join(work, String(index));
  let queued = first;
  const writeAhead = (upTo: number) => {
    for (; queued < Math.min(upTo, first + cases.length); queued++) {
      mkdirSync(join(caseDir(queued), 'gnu'), { recursive: true });
      writeFileSync(join(caseDir(queued), 'case.tar.gz'), cases[queued - first]!.bytes);
      shellOf(queued).send(queued);
    }
  };
  writeAhead(first + AHEAD);
  for (let index = first; index < first + cases.length; index++) {
    const { outcome, failures } = await runCase(cases[index - first]!, index, caseDir(index), shellOf(index).statuses(index));
    rmSync(caseDir(index), { recursive: true, force: true });
    writeAhead(index + 1 + AHEAD);
    await report({ finished: index, outcome, failures });
  }
  await Promise.all(shells.map((shell) => shell.end()));
  await report({ done: true });
  process.disconnect();
}

void main();
