// protobuf's own text-format parser as an oracle for lib/config/parse.ts: `protoc --encode` runs Google's C++
// TextFormat::Parser (the one Triton uses to read config.pbtxt), and python's protobuf (C++ backed) decodes what it
// produced so values can be compared. The .proto is written from our own descriptor (lib/config/model-config.descriptor.ts),
// so the oracle checks the parser, given the same schema. Needs protoc (Debian protobuf-compiler) and python3-protobuf.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
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

/** Runs protoc's text parser over `texts` (a few at a time) and decodes what it accepted. */
export async function runOracle(schema: SchemaDescriptor, texts: readonly string[]): Promise<OracleResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mme-protobuf-oracle-'));
  writeFileSync(join(dir, 'model_config.proto'), protoFromDescriptor(schema));
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
