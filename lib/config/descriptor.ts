// The protobuf shape of a schema as plain data: what the text-format parser needs to know about each field.
// Built from the zod schemas by `describeSchema` (at generate time, never at CLI run time: zod is slow to load).

export type ScalarType = 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'double' | 'bool' | 'string';

export type ValueDescriptor =
  | { readonly kind: 'scalar'; readonly type: ScalarType }
  | { readonly kind: 'enum'; readonly enum: string }
  | { readonly kind: 'message'; readonly message: string };

export type FieldDescriptor =
  | (ValueDescriptor & { readonly repeated?: boolean; readonly oneof?: string })
  | { readonly kind: 'map'; readonly key: ScalarType; readonly value: ValueDescriptor };

export interface MessageDescriptor {
  readonly fields: Readonly<Record<string, FieldDescriptor>>;
}

export interface SchemaDescriptor {
  readonly root: string;
  readonly messages: Readonly<Record<string, MessageDescriptor>>;
  /** Enum value names in number order (value i has number i). */
  readonly enums: Readonly<Record<string, readonly string[]>>;
}

/** A zod schema seen through its public-enough internals (`_zod.def`) and its registry metadata (`meta()`). */
interface ZodLike {
  readonly _zod: { readonly def: Record<string, unknown> & { readonly type: string } };
  meta(): Record<string, unknown> | undefined;
}

const FORMATS: Record<string, ScalarType> = {
  int32: 'int32',
  uint32: 'uint32',
  int64: 'int64',
  uint64: 'uint64',
  float32: 'float',
  float64: 'double',
};

/** Walks a zod object schema built like lib/config/model-config-schema.ts and returns its descriptor. */
export function describeSchema(root: unknown): SchemaDescriptor {
  const messages: Record<string, MessageDescriptor> = {};
  const enums: Record<string, readonly string[]> = {};

  const describeMessage = (schema: ZodLike): string => {
    const name = String(schema.meta()?.message ?? '');
    if (!name) throw new Error('every object schema needs meta({ message })');
    if (messages[name]) return name;
    const fields: Record<string, FieldDescriptor> = {};
    messages[name] = { fields };
    const shape = schema._zod.def.shape as Record<string, ZodLike>;
    for (const [fieldName, fieldSchema] of Object.entries(shape)) fields[fieldName] = describeField(fieldSchema);
    return name;
  };

  const describeValue = (schema: ZodLike): ValueDescriptor => {
    const def = schema._zod.def;
    switch (def.type) {
      case 'object':
        return { kind: 'message', message: describeMessage(schema) };
      case 'enum': {
        const name = String(schema.meta()?.enum ?? '');
        if (!name) throw new Error('every enum schema needs meta({ enum })');
        enums[name] = Object.keys(def.entries as Record<string, string>);
        return { kind: 'enum', enum: name };
      }
      case 'string':
        return { kind: 'scalar', type: 'string' };
      case 'custom': {
        const scalar = schema.meta()?.scalar as ScalarType | undefined;
        if (!scalar) throw new Error('custom schemas need meta({ scalar })');
        return { kind: 'scalar', type: scalar };
      }
      case 'boolean':
        return { kind: 'scalar', type: 'bool' };
      case 'number':
      case 'bigint': {
        const type = FORMATS[String(def.format)];
        if (!type) throw new Error(`unsupported number format ${String(def.format)}`);
        return { kind: 'scalar', type };
      }
      default:
        throw new Error(`unsupported schema type ${def.type}`);
    }
  };

  const describeField = (schema: ZodLike): FieldDescriptor => {
    const meta = (schema._zod.def.type === 'optional' ? schema.meta() : undefined) ?? {};
    const inner = schema._zod.def.type === 'optional' ? (schema._zod.def.innerType as ZodLike) : schema;
    const def = inner._zod.def;
    if (def.type === 'record') {
      const key = (meta.mapKey as ScalarType | undefined) ?? 'string';
      return { kind: 'map', key, value: describeValue(def.valueType as ZodLike) };
    }
    const oneof = meta.oneof as string | undefined;
    if (def.type === 'array') {
      return { ...describeValue(def.element as ZodLike), repeated: true };
    }
    return oneof ? { ...describeValue(inner), oneof } : describeValue(inner);
  };

  const rootName = describeMessage(root as ZodLike);
  return { root: rootName, messages, enums };
}
