// protobuf's own text-format parser as an oracle for lib/config/parse.ts: `protoc --encode` runs Google's C++
// TextFormat::Parser (the one Triton uses to read config.pbtxt), and python's protobuf (C++ backed) decodes what it
// produced so values can be compared. The .proto is written from our own descriptor (lib/config/model-config.descriptor.ts),
// so the oracle checks the parser, given the same schema. Needs protoc (Debian protobuf-compiler) and python3-protobuf.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FieldDescriptor, SchemaDescriptor } from '../../lib/config/descriptor';
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
 * verdict. Same .proto and same text give the same answer, so a run spawns protoc only for texts it has not seen
 * (about 1,300 spawns otherwise). MME_PROTOBUF_ORACLE_CACHE=off turns it off; a changed schema gets a new file.
 */
const CACHE_DIR = join(__dirname, '..', '..', 'node_modules', '.cache', 'mme-protobuf-oracle');

function cacheFile(proto: string): string | undefined {
  if (process.env.MME_PROTOBUF_ORACLE_CACHE === 'off') return undefined;
  const protoc = spawnSync('protoc', ['--version'], { encoding: 'utf8' }).stdout.trim();
  return join(CACHE_DIR, `${createHash('sha256').update(`${protoc}\0${proto}`).digest('hex').slice(0, 32)}.json`);
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
  mkdirSync(CACHE_DIR, { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(entries));
  renameSync(temp, file);
}

/** protoc's verdict on each of `texts`: from the cache where it has one, otherwise by running protoc. */
export async function runOracle(schema: SchemaDescriptor, texts: readonly string[]): Promise<OracleResult[]> {
  const proto = protoFromDescriptor(schema);
  const file = cacheFile(proto);
  const cached = readCache(file);
  const keys = texts.map(textKey);
  const missing = [...new Set(keys.filter((key) => !(key in cached)))];
  if (missing.length > 0) {
    const textOf = new Map(keys.map((key, i) => [key, texts[i]!]));
    const fresh = await runProtoc(proto, missing.map((key) => textOf.get(key)!));
    missing.forEach((key, i) => (cached[key] = fresh[i]!));
    // Only this run's texts are kept, so the file never outgrows the tests that use it.
    writeCache(file, Object.fromEntries(keys.map((key) => [key, cached[key]!])));
  }
  return keys.map((key) => cached[key]!);
}

/** Runs protoc's text parser over `texts` (a few at a time) and decodes what it accepted. */
async function runProtoc(proto: string, texts: readonly string[]): Promise<OracleResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mme-protobuf-oracle-'));
  try {
    return await runProtocIn(dir, proto, texts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runProtocIn(dir: string, proto: string, texts: readonly string[]): Promise<OracleResult[]> {
  writeFileSync(join(dir, 'model_config.proto'), proto);
  const compile = spawnSync('protoc', [`-I${dir}`, `--descriptor_set_out=${join(dir, 'set.pb')}`, 'model_config.proto'], {
    encoding: 'utf8',
  });
  if (compile.status !== 0) throw new Error(`protoc could not compile the generated .proto: ${compile.stderr}`);

  const encode = (text: string) =>
    new Promise<{ ok: boolean; out: Buffer; err: string }>((resolve) => {
      // The compiled descriptor set spares each run parsing the .proto again.
      const child = spawn('protoc', [`--descriptor_set_in=${join(dir, 'set.pb')}`, '--encode=inference.ModelConfig', 'model_config.proto']);
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      child.on('close', (code) => resolve({ ok: code === 0, out: Buffer.concat(out), err }));
      child.stdin.end(text);
    });
  const encoded: { ok: boolean; out: Buffer; err: string }[] = new Array(texts.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < texts.length) {
        const i = next++;
        encoded[i] = await encode(texts[i]!);
      }
    }),
  );
  const accepted = encoded.filter((e) => e.ok);
  const decode = spawnSync(pythonWith(['google.protobuf']) ?? 'python3', ['-c', DECODER, join(dir, 'set.pb')], {
    input: accepted.map((e) => e.out.toString('base64')).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (decode.status !== 0) throw new Error(`decoding failed: ${decode.stderr}`);
  const values = JSON.parse(decode.stdout) as unknown[];
  let v = 0;
  return encoded.map((e) => (e.ok ? { accepted: true, value: values[v++] } : { accepted: false, error: e.err.trim() }));
}
