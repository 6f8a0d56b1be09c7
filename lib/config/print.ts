// Printing a parsed ModelConfig: JSON with protobuf field names, enums as names, 64-bit integers as strings.

import type { ModelConfig } from './model-config-schema';

export function configToJson(config: ModelConfig, indent = 2): string {
  return JSON.stringify(config, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value), indent);
}

/** The same conversion as plain data (for embedding in a larger JSON document). */
export function configToPlain(config: ModelConfig): unknown {
  return JSON.parse(configToJson(config, 0));
}
