// protobuf's own text-format parser as an oracle for lib/config/parse.ts: `protoc --encode` runs Google's C++
// TextFormat::Parser (the one Triton uses to read config.pbtxt), and python's protobuf (C++ backed) decodes what it
// produced so values can be compared. The .proto is written from our own descriptor (lib/config/model-config.descriptor.ts),
// so the oracle checks the parser, given the same schema. Needs protoc (Debian protobuf-compiler) and python3-protobuf.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { FieldDescriptor, SchemaDescriptor } from '../../lib/config/descriptor';
import { pickAtRandom, readRecording, recheckCount, recordingFile, recordingInto, stageAnswers } from '../oracle-recording';
import { pythonWith, type Needs } from '../tools';

/** What the oracle needs (test/tools.ts finds them, or skips or fails the suite by the one rule). */
export const ORACLE_NEEDS: Needs = { tools: ['protoc'], python: ['google.protobuf'] };

/** The schema as a proto3 file: messages nested by their dotted names, fields numbered in descriptor order. */
export function protoFromDescriptor(schema: SchemaDescriptor): string {
  interface Node {
    name: string;
    fields?: Readonly<Record<string, FieldDescriptor>>;
    enumValues?: readonly string[];
    children: Map<string, Node>;
  }
  const root: Node = { name: '', children: new Map() };
  const nodeOf = (dotted: string): Node => {
    let node = root;
    for (const part of dotted.split('.')) {
      let child = node.children.get(part);
      if (!child) node.children.set(part, (child = { name: part, children: new Map() }));
      node = child;
    }
    return node;
  };
  for (const [name, message] of Object.entries(schema.messages)) nodeOf(name).fields = message.fields;
  for (const [name, values] of Object.entries(schema.enums)) nodeOf(name).enumValues = values;

  // Type names are written fully qualified (`.inference.X.Y`): no scoping surprises.
  const typeName = (t: { kind: string; type?: string; message?: string; enum?: string }): string =>
    t.kind === 'scalar' ? t.type! : `.inference.${t.kind === 'message' ? t.message : t.enum}`;

  const emit = (node: Node, indent: string): string => {
    if (node.enumValues) {
      return `${indent}enum ${node.name} {\n${node.enumValues.map((v, i) => `${indent}  ${v} = ${i};`).join('\n')}\n${indent}}\n`;
    }
    let out = `${indent}message ${node.name} {\n`;
    for (const child of node.children.values()) out += emit(child, indent + '  ');
    const oneofs = new Map<string, string[]>();
    let number = 0;
    for (const [fieldName, field] of Object.entries(node.fields ?? {})) {
      number += 1;
      let line: string;
      if (field.kind === 'map') line = `map<${field.key}, ${typeName(field.value)}> ${fieldName} = ${number};`;
      else line = `${field.repeated ? 'repeated ' : ''}${typeName(field)} ${fieldName} = ${number};`;
      const group = field.kind !== 'map' ? field.oneof : undefined;
      if (group) {
        if (!oneofs.has(group)) oneofs.set(group, []);
        oneofs.get(group)!.push(line);
      } else {
        out += `${indent}  ${line}\n`;
      }
    }
    for (const [group, lines] of oneofs) {
      out += `${indent}  oneof ${group} {\n${lines.map((l) => `${indent}    ${l}`).join('\n')}\n${indent}  }\n`;
    }
    return out + `${indent}}\n`;
  };
  return `syntax = "proto3";\npackage inference;\n\n${[...root.children.values()].map((n) => emit(n, '')).join('\n')}`;
}

export interface OracleResult {
  readonly accepted: boolean;
  /** protoc's error text when rejected. */
  readonly error?: string;
  /** MessageToDict(preserving_proto_field_name=True) of what protoc encoded, when accepted. */
  readonly value?: unknown;
}

const DECODER = `
import base64, json, sys
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
fds = descriptor_pb2.FileDescriptorSet()
fds.ParseFromString(open(sys.argv[1], 'rb').read())
pool = descriptor_pool.DescriptorPool()
for f in fds.file: pool.Add(f)
cls = message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName('inference.ModelConfig'))
out = []
for line in sys.stdin:
    m = cls()
    m.ParseFromString(base64.b64decode(line.strip()))
    out.append(json_format.MessageToDict(m, preserving_proto_field_name=True))
json.dump(out, sys.stdout)
`;

/**
 * Where the oracle's answers are kept between runs: one file per .proto, mapping a hash of each text to protoc's
 * verdict. Same .proto and same text give the same answer, so a run asks protoc only about texts it has not seen
 * (about 700 protoc runs for the conformance suite's 1,400 texts otherwise: one per text it rejects, see answerAll).
 * MME_PROTOBUF_ORACLE_CACHE=off turns it off and a path puts it there; a changed schema gets a new file.
 */
function cacheDir(): string | undefined {
  const setting = process.env.MME_PROTOBUF_ORACLE_CACHE;
  if (setting === 'off') return undefined;
  return setting || join(__dirname, '..', '..', 'node_modules', '.cache', 'mme-protobuf-oracle');
}

let protocVersion: string | undefined;

/** protoc's version, asked once per process: the conformance suites call the oracle once per group of texts. */
function protocVersionHere(): string {
  return (protocVersion ??= spawnSync('protoc', ['--version'], { encoding: 'utf8' }).stdout.trim());
}

function cacheFile(proto: string): string | undefined {
  const dir = cacheDir();
  if (!dir) return undefined;
  return join(dir, `${createHash('sha256').update(`${protocVersionHere()}\0${proto}`).digest('hex').slice(0, 32)}.json`);
}

function textKey(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function readCache(file: string | undefined): Record<string, OracleResult> {
  if (!file) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, OracleResult>;
  } catch {
    return {};
  }
}

function writeCache(file: string | undefined, entries: Record<string, OracleResult>): void {
  if (!file) return;
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(entries));
  renameSync(temp, file);
}

/**
 * protoc's answers recorded in the repository (test/oracle-recording.ts): for the conformance texts, by the same text
 * hash as the cache, under the protoc, the .proto and the python protobuf (which decodes what protoc encoded) that gave
 * them. Used when all three are the ones here; MME_PROTOBUF_ORACLE_RECORDING names another or is `off`, and setting
 * MME_PROTOBUF_ORACLE_CACHE turns it off too (recordingFile).
 */
export const RECORDING = join(__dirname, 'protoc-answers.json');

interface ProtocRecording {
  readonly protoc: string;
  readonly proto: string;
  readonly decoder: string;
  readonly answers: Readonly<Record<string, OracleResult>>;
}

/** Recorded answers each run asks protoc again about (test/oracle-recording.ts): one protoc batch's worth. */
const RECHECKED = 16;

/** What identifies the tools and schema behind an answer: protoc's version, the .proto's hash, the decoder's version. */
function provenance(proto: string): Omit<ProtocRecording, 'answers'> {
  decoderVersion ??= spawnSync(pythonWith(['google.protobuf']) ?? 'python3', ['-c', 'import google.protobuf as p; print(p.__version__)'], {
    encoding: 'utf8',
  }).stdout.trim();
  const hash = createHash('sha256').update(proto).digest('hex');
  return { protoc: protocVersionHere(), proto: hash, decoder: `python protobuf ${decoderVersion}` };
}

/** python protobuf's version, asked once per process. */
let decoderVersion: string | undefined;

/** The recorded answers for this .proto with the tools here, or none (no recording in use, other tools). */
function recordedAnswers(file: string | undefined, proto: string): Readonly<Record<string, OracleResult>> {
  const recording = file === undefined ? undefined : readRecording<ProtocRecording>(file);
  if (!recording?.answers) return {};
  const here = provenance(proto);
  const same = recording.protoc === here.protoc && recording.proto === here.proto && recording.decoder === here.decoder;
  return same ? recording.answers : {};
}

/**
 * protoc's verdict on each of `texts`: from the cache where it has one, else from the recording, otherwise by running
 * protoc. A few recorded answers are asked of protoc again each run; one that differs fails the run.
 */
export async function runOracle(schema: SchemaDescriptor, texts: readonly string[]): Promise<OracleResult[]> {
  const proto = protoFromDescriptor(schema);
  const recordingAt = recordingFile('MME_PROTOBUF_ORACLE_RECORDING', 'MME_PROTOBUF_ORACLE_CACHE', RECORDING);
  // Recording: protoc is asked about every text (no cache, no recording), and its answers are staged.
  const recording = recordingAt === undefined ? undefined : recordingInto();
  const file = recording ? undefined : cacheFile(proto);
  const cached = readCache(file);
  const recorded = recording ? {} : recordedAnswers(recordingAt, proto);
  const keys = texts.map(textKey);
  const unique = [...new Set(keys)];
  const fromRecording = unique.filter((key) => !(key in cached) && key in recorded);
  const missing = unique.filter((key) => !(key in cached) && !(key in recorded));
  const rechecked = pickAtRandom(fromRecording, recheckCount(RECHECKED));
  const asked = [...missing, ...rechecked];
  const textOf = new Map(keys.map((key, i) => [key, texts[i]!]));
  if (asked.length > 0) {
    const fresh = await runProtoc(proto, asked.map((key) => textOf.get(key)!));
    asked.forEach((key, i) => {
      if (key in recorded && !isDeepStrictEqual(fresh[i], recorded[key])) {
        throw new Error(
          `protoc's answer for this text differs from the one recorded in ${recordingAt}:\n${textOf.get(key)}\n` +
            `protoc now: ${JSON.stringify(fresh[i])}\nrecorded:   ${JSON.stringify(recorded[key])}\n` +
            'Record the answers again (npm run record-oracle-answers) if protoc changed on purpose; otherwise the recording is wrong.',
        );
      }
      cached[key] = fresh[i]!;
    });
  }
  for (const key of fromRecording) cached[key] ??= recorded[key]!;
  // Only this run's texts are kept, so the file never outgrows the tests that use it.
  if (missing.length + fromRecording.length > 0) writeCache(file, Object.fromEntries(keys.map((key) => [key, cached[key]!])));
  if (recording) stageAnswers('protoc', provenance(proto), 'answers', Object.fromEntries(keys.map((key) => [key, cached[key]!])));
  return keys.map((key) => cached[key]!);
}

/**
 * protoc's verdict on each of `texts` read alone: one `protoc --encode` run per text, as runOracle gives for a single
 * text, never the cache. Only the .proto's compilation and the python that decodes what protoc encoded are shared
 * (neither reads the texts), so the answers are runOracle(schema, [text]) for each text, for a fraction of the
 * process starts.
 */
export async function runOracleAlone(schema: SchemaDescriptor, texts: readonly string[]): Promise<OracleResult[]> {
  return runProtoc(protoFromDescriptor(schema), texts, { batch: false });
}

/** Runs protoc's text parser over `texts` (many texts per run, see answerAll) and decodes what it accepted. */
async function runProtoc(proto: string, texts: readonly string[], options = { batch: true }): Promise<OracleResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mme-protobuf-oracle-'));
  try {
    return await runProtocIn(dir, proto, texts, options.batch);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The batch: a message of the generated .proto's package holding ModelConfigs, one per text, each written as
 * `mme_oracle_item {\n<text>\n}\n`. No message of the schema has this field, and no text is batched that names it.
 */
const BATCH_MESSAGE = 'MmeOracleBatch';
const ITEM_FIELD = 'mme_oracle_item';
/** Texts per batch: a batch is parsed again after each text it rejects, so not all of them at once. */
const BATCH_SIZE = 64;

interface Encoded {
  readonly ok: boolean;
  readonly out: Buffer;
  readonly err: string;
}

async function runProtocIn(dir: string, proto: string, texts: readonly string[], batch: boolean): Promise<OracleResult[]> {
  writeFileSync(join(dir, 'model_config.proto'), `${proto}\nmessage ${BATCH_MESSAGE} {\n  repeated ModelConfig ${ITEM_FIELD} = 1;\n}\n`);
  const compile = spawnSync('protoc', [`-I${dir}`, `--descriptor_set_out=${join(dir, 'set.pb')}`, 'model_config.proto'], {
    encoding: 'utf8',
  });
  if (compile.status !== 0) throw new Error(`protoc could not compile the generated .proto: ${compile.stderr}`);

  const encode = (message: string, input: string) =>
    new Promise<Encoded>((resolve) => {
      // The compiled descriptor set spares each run parsing the .proto again.
      const child = spawn('protoc', [`--descriptor_set_in=${join(dir, 'set.pb')}`, `--encode=inference.${message}`, 'model_config.proto']);
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      child.on('close', (code) => resolve({ ok: code === 0, out: Buffer.concat(out), err }));
      child.stdin.end(input);
    });

  // Per text: protoc's error, or the ModelConfig it encoded (decoded below, all in one python).
  const answers: ({ error: string } | { encoded: Buffer })[] = new Array(texts.length);
  const alone = async (i: number) => {
    const run = await encode('ModelConfig', texts[i]!);
    answers[i] = run.ok ? { encoded: run.out } : { error: run.err.trim() };
  };
  const batches: number[][] = [];
  const batchable: number[] = [];
  for (let i = 0; i < texts.length; i++) (!batch || texts[i]!.includes(ITEM_FIELD) ? batches.push([i]) : batchable.push(i));
  for (let i = 0; i < batchable.length; i += BATCH_SIZE) batches.push(batchable.slice(i, i + BATCH_SIZE));
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        if (batch.length === 1) await alone(batch[0]!);
        else await answerAll(batch, texts, encode, alone, answers);
      }
    }),
  );
  const accepted = answers.filter((a): a is { encoded: Buffer } => 'encoded' in a);
  const decode = spawnSync(pythonWith(['google.protobuf']) ?? 'python3', ['-c', DECODER, join(dir, 'set.pb')], {
    input: accepted.map((a) => a.encoded.toString('base64')).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (decode.status !== 0) throw new Error(`decoding failed: ${decode.stderr}`);
  const values = JSON.parse(decode.stdout) as unknown[];
  let v = 0;
  return answers.map((a) => ('encoded' in a ? { accepted: true, value: values[v++] } : { accepted: false, error: a.error }));
}

/**
 * Answers the texts `indices` with as few protoc runs as protoc allows: one run per text it rejects (it stops at the
 * first error), one for all it accepts. Every answer is protoc's own:
 * - a batch protoc accepts holds one item per text, each parsed within its own item: a text that closed its item early
 *   or left it open would have made the batch fail (the next `mme_oracle_item` is no field of a ModelConfig, and no
 *   text names it). Its items are what protoc encodes for each text alone.
 * - a batch it rejects at a line of text k: the texts before k parsed without error (they are batched again), k is
 *   rejected, with protoc's message at k's own line. Where the place may not be k's own doing (on a wrapper's line or
 *   k's last, naming the batch, after a closing bracket k did not open), protoc runs k (or the text before) alone.
 */
async function answerAll(
  indices: readonly number[],
  texts: readonly string[],
  encode: (message: string, input: string) => Promise<Encoded>,
  alone: (i: number) => Promise<void>,
  answers: ({ error: string } | { encoded: Buffer })[],
): Promise<void> {
  let pending = [...indices];
  const parsed: number[] = [];
  while (pending.length > 0) {
    let input = '';
    let line = 1;
    const firstLines: number[] = [];
    for (const i of pending) {
      firstLines.push(line + 1);
      input += `${ITEM_FIELD} {\n${texts[i]}\n}\n`;
      line += texts[i]!.split('\n').length + 2;
    }
    const run = await encode(BATCH_MESSAGE, input);
    if (run.ok) {
      const items = splitItems(run.out);
      if (items?.length === pending.length) pending.forEach((i, n) => (answers[i] = { encoded: items[n]! }));
      else for (const i of pending) await alone(i);
      break;
    }
    const at = [...run.err.matchAll(/input:(\d+):(\d+):/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    const errorLine = at[0]?.[0] ?? line;
    // The text whose item holds the error: its opening line, its lines, its closing line.
    let k = pending.length - 1;
    while (k > 0 && errorLine < firstLines[k]! - 1) k--;
    const lines = texts[pending[k]!]!.split('\n');
    // Its lines but the last: there the text alone ends (a string left open is "Unexpected end of string"), where in
    // the batch a line break follows.
    const own = (l: number) => l >= firstLines[k]! && l < firstLines[k]! + lines.length - 1;
    if (
      at.length > 0 &&
      at.every(([l]) => own(l)) &&
      !run.err.includes(BATCH_MESSAGE) &&
      !run.err.includes(ITEM_FIELD) &&
      !closesUnopened(lines.slice(0, errorLine - firstLines[k]! + 1).join('\n'))
    ) {
      const shift = firstLines[k]! - 1;
      answers[pending[k]!] = { error: run.err.replace(/input:(\d+):/g, (_m, l: string) => `input:${Number(l) - shift}:`).trim() };
    } else {
      // On k's opening line the text before left its item open: that one is the text to run alone.
      if (errorLine === firstLines[k]! - 1 && k > 0) k--;
      await alone(pending[k]!);
    }
    parsed.push(...pending.slice(0, k));
    pending = pending.slice(k + 1);
  }
  if (parsed.length > 0) await answerAll(parsed, texts, encode, alone, answers);
}

/** The items of an encoded batch (field 1, length-delimited, repeated), or undefined if it holds anything else. */
function splitItems(encoded: Buffer): Buffer[] | undefined {
  const items: Buffer[] = [];
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; at < encoded.length && shift < 35; shift += 7) {
      const byte = encoded[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    return -1;
  };
  while (at < encoded.length) {
    if (varint() !== ((1 << 3) | 2)) return undefined;
    const length = varint();
    if (length < 0 || at + length > encoded.length) return undefined;
    items.push(encoded.subarray(at, at + length));
    at += length;
  }
  return items;
}

/**
 * Whether `text` may close a bracket it did not open (a `}` or `>` outside strings and comments, below depth 0):
 * within a batch that closes the text's item and protoc goes on reading it as the batch, so where it stops is not
 * where protoc stops on the text alone. Strings and comments are skipped as protobuf's tokenizer reads them; where
 * this reads them differently, the text is only run alone once more.
 */
function closesUnopened(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      for (i++; i < text.length && text[i] !== c && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
    } else if (c === '{' || c === '<') depth++;
    else if (c === '}' || c === '>') {
      if (--depth < 0) return true;
    }
  }
  return false;
}
