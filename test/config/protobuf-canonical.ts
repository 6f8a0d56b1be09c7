// Our parsed config in the shape python's json_format.MessageToDict gives protobuf's: proto3 defaults left out,
// 64-bit integers as strings, enum names, float fields rounded to 32 bits. Used to compare values with the oracle.

import type { FieldDescriptor, SchemaDescriptor, ValueDescriptor } from '../../lib/config/descriptor';

export function canonical(schema: SchemaDescriptor, message: string, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = schema.messages[message]!.fields;
  for (const [name, field] of Object.entries(fields)) {
    const v = value[name];
    if (v === undefined) continue;
    if (field.kind === 'map') {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) continue;
      out[name] = Object.fromEntries(entries.map(([k, x]) => [k, one(schema, field.value, x, true)]));
    } else if (field.repeated) {
      const list = v as unknown[];
      if (list.length === 0) continue;
      out[name] = list.map((x) => one(schema, field, x, true));
    } else {
      const present = field.kind === 'message' || field.oneof !== undefined || !isDefault(schema, field, v);
      if (present) out[name] = one(schema, field, v, false);
    }
  }
  return out;
}

function isDefault(schema: SchemaDescriptor, field: FieldDescriptor, v: unknown): boolean {
  if (field.kind === 'enum') return v === undefined || v === schema.enums[field.enum]![0];
  if (typeof v === 'bigint') return v === 0n;
  if (typeof v === 'number') return Object.is(v, 0) || (field.kind === 'scalar' && field.type === 'float' && Object.is(Math.fround(v), 0));
  return v === '' || v === false;
}

function one(schema: SchemaDescriptor, field: ValueDescriptor, v: unknown, inList: boolean): unknown {
  if (field.kind === 'message') return canonical(schema, field.message, (v ?? {}) as Record<string, unknown>);
  if (field.kind === 'enum') return v ?? schema.enums[field.enum]![0];
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    const x = field.type === 'float' ? Math.fround(v) : v;
    if (Number.isNaN(x)) return 'NaN';
    if (x === Infinity) return 'Infinity';
    if (x === -Infinity) return '-Infinity';
    return x;
  }
  void inList;
  return v;
}

/** Python's float32 values are shortest-repr decimals; compare float fields after rounding both to 32 bits. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(Math.fround(a), Math.fround(b)) || a === b;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameValue((a as never)[k], (b as never)[k]));
  }
  return a === b;
}
