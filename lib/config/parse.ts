// config.pbtxt → ModelConfig: a protobuf text-format parser driven by the ModelConfig descriptor.
// It accepts what Google's TextFormat parser accepts and reports what it rejects (with protobuf's own wording) as
// diagnostics with line, column and a caret excerpt. It never throws on user input.

import { closest, diagnostic, type Diagnostic, type SourcePosition } from '../diagnostics';
import type { FieldDescriptor, ScalarType, SchemaDescriptor, ValueDescriptor } from './descriptor';
import { MODEL_CONFIG_DESCRIPTOR } from './model-config.descriptor';
import type { ModelConfig } from './model-config-schema';
import { Scanner, Token } from './text-format-scanner';

/** Larger config files are refused: real ones are a few kilobytes. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
/** Protobuf's default recursion limit for text parsing. */
export const MAX_NESTING_DEPTH = 100;

export type { SourcePosition } from '../diagnostics';

/** Positions of map entries' values are recorded under this prefix and the entry's key (no field name has a NUL). */
const MAP_VALUE_PREFIX = '\u0000value:';

/**
 * Where each parsed message and field came from, for diagnostics raised by later rules. Only offsets are kept while
 * parsing (diagnostics are rare); lines and columns are computed from the text when asked for.
 */
export class ConfigPositions {
  /**
   * (object, key, element index or -1, offset) in parse order; indexed only when a position is first asked for.
   * Made at the first record: a parse whose positions are deferred keeps none.
   */
  private records: unknown[] | undefined;
  private index: Map<object, Map<string, number>> | undefined;
  private lineStarts: number[] | undefined;
  /** With deferred positions: the config they are about, and the schema to parse its text again with, recording them. */
  private deferredConfig: object | undefined;
  private deferredSchema: SchemaDescriptor | undefined;

  /** `recording` false: `set` keeps nothing (a parse whose positions are deferred). */
  constructor(
    private readonly text = '',
    private readonly recording = true,
  ) {}

  /**
   * Records nothing now: the first question parses the text again with `schema`, recording positions, and pairs that
   * parse's messages with `config`'s (the same parse, so the same shape). Most models are never asked (no diagnostic),
   * and positions were a third of what each parsed model kept alive for the collector (bench/validate.js, issue 23
   * item 8); two fields, not a closure, keep what the second parse needs.
   */
  static deferred(text: string, config: object, schema: SchemaDescriptor): ConfigPositions {
    const positions = new ConfigPositions(text);
    positions.deferredConfig = config;
    positions.deferredSchema = schema;
    return positions;
  }

  /** The position of `field` (its name token) in `message`, or of the message itself when `field` is omitted. */
  of(message: object | undefined, field?: string, index?: number): SourcePosition | undefined {
    if (!message) return undefined;
    const offsets = this.buildIndex().get(message);
    if (!offsets) return undefined;
    const offset =
      field === undefined
        ? offsets.get('')
        : ((index !== undefined ? offsets.get(`${field}#${index}`) : undefined) ?? offsets.get(field));
    return offset === undefined ? undefined : this.at(offset);
  }

  /** Where the value of the map entry `key` is written (a fault about the value, such as an ensemble tensor name). */
  ofMapValue(map: object | undefined, key: string): SourcePosition | undefined {
    return this.of(map, MAP_VALUE_PREFIX + key) ?? this.of(map, key);
  }

  /** Records where `key` of `message` (its `index`-th element, for a repeated field) starts. */
  set(message: object, key: string, offset: number, index = -1): void {
    if (!this.recording) return;
    (this.records ??= []).push(message, key, index, offset);
    this.index = undefined;
  }

  private buildIndex(): Map<object, Map<string, number>> {
    if (this.index) return this.index;
    if (this.deferredSchema) {
      const fresh = new TextFormatParser(this.text, this.deferredSchema, {}).parse();
      const index = new Map<object, Map<string, number>>();
      pairUp(fresh.config, this.deferredConfig, fresh.positions.buildIndex(), index);
      return (this.index = index);
    }
    const index = new Map<object, Map<string, number>>();
    const records = this.records ?? [];
    for (let i = 0; i < records.length; i += 4) {
      const message = records[i] as object;
      let offsets = index.get(message);
      if (!offsets) index.set(message, (offsets = new Map()));
      const element = records[i + 2] as number;
      const key = element < 0 ? (records[i + 1] as string) : `${records[i + 1] as string}#${element}`;
      if (!offsets.has(key)) offsets.set(key, records[i + 3] as number);
    }
    return (this.index = index);
  }

  /** Line and column (1-based) of an offset in the text. */
  at(offset: number): SourcePosition {
    const starts = (this.lineStarts ??= lineStartsOf(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1, offset };
  }
}

/** Gives each message of `kept` the offsets of its twin in `fresh` (the same text parsed again). */
function pairUp(fresh: unknown, kept: unknown, freshIndex: Map<object, Map<string, number>>, index: Map<object, Map<string, number>>) {
  if (typeof fresh !== 'object' || fresh === null || typeof kept !== 'object' || kept === null) return;
  if (ArrayBuffer.isView(fresh)) return;
  if (Array.isArray(fresh)) {
    if (Array.isArray(kept)) fresh.forEach((element, i) => pairUp(element, kept[i], freshIndex, index));
    return;
  }
  const offsets = freshIndex.get(fresh);
  if (offsets && !index.has(kept)) index.set(kept, offsets);
  for (const key of Object.keys(fresh)) {
    pairUp((fresh as Record<string, unknown>)[key], (kept as Record<string, unknown>)[key], freshIndex, index);
  }
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

export interface ParseOptions {
  /** The file name used in diagnostics. */
  readonly file?: string;
  /** The model the file belongs to, copied into diagnostics. */
  readonly model?: string;
  /**
   * Positions are found only when first asked for, by parsing the text again (see ConfigPositions.deferred): for
   * callers that keep many parsed configs and rarely ask. @default false
   */
  readonly deferPositions?: boolean;
}

type ParsedText = { config: Record<string, unknown>; diagnostics: Diagnostic[]; positions: ConfigPositions };

export interface ParseResult {
  readonly config: ModelConfig;
  readonly diagnostics: Diagnostic[];
  readonly positions: ConfigPositions;
}

export function parseModelConfig(text: string, options: ParseOptions = {}): ParseResult {
  return parseTextFormat(text, MODEL_CONFIG_DESCRIPTOR, options) as ParseResult;
}

export function parseTextFormat(
  text: string,
  schema: SchemaDescriptor,
  options: ParseOptions = {},
): ParsedText {
  if (!options.deferPositions) return new TextFormatParser(text, schema, options).parse();
  const parsed = new TextFormatParser(text, schema, options, false).parse();
  return { config: parsed.config, diagnostics: parsed.diagnostics, positions: ConfigPositions.deferred(text, parsed.config, schema) };
}

class SyntaxStop extends Error {}

const BYTE_ORDER_MARK = 0xfeff;
const CH_0 = 0x30;

const INT_RANGES: Record<'int32' | 'uint32' | 'int64' | 'uint64', [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};
const BOOL_WORDS: Record<string, boolean> = { true: true, True: true, t: true, false: false, False: false, f: false };
const utf8 = new TextDecoder('utf-8', { fatal: true });

class TextFormatParser {
  private readonly scanner: Scanner;
  private token: Token;
  private readonly diagnostics: Diagnostic[] = [];
  private readonly positions: ConfigPositions;
  /** Where the `key` and the `value` of the map entry being parsed are written. */
  private mapKeyOffset: number | undefined;
  private mapValueOffset: number | undefined;
  /**
   * The non-repeated fields given in the messages being parsed, each with the line it was last given on, and the
   * repeated ones (whose arrays are trimmed when their message ends): stacks, each message's part above its parent's.
   * Few fields per message: arrays are cheaper to search than Maps, and three for the whole parse, not per message,
   * are less for the collector (bench/validate.js).
   */
  private readonly givenNames: string[] = [];
  private readonly givenLines: number[] = [];
  private readonly givenLists: string[] = [];
  /** The messages being parsed, outermost first: where each `{` or `<` was, to say which one is never closed. */
  private readonly openBlocks: { readonly name: string; readonly line: number; readonly column: number }[] = [];

  constructor(
    private readonly text: string,
    private readonly schema: SchemaDescriptor,
    private readonly options: ParseOptions,
    /** False: no positions are recorded (the caller defers them). */
    recordPositions = true,
  ) {
    this.scanner = new Scanner(text);
    this.positions = new ConfigPositions(text, recordPositions);
    this.token = this.scanner.next();
  }

  parse() {
    const config: Record<string, unknown> = {};
    if (this.text.length > MAX_CONFIG_BYTES) {
      this.report(
        this.token,
        'config-too-large',
        `The file is ${this.text.length} bytes; a model configuration is at most ${MAX_CONFIG_BYTES} bytes here. ` +
          'Check that this is really a config.pbtxt.',
      );
      return { config, diagnostics: this.diagnostics, positions: this.positions };
    }
    if (this.text.charCodeAt(0) === BYTE_ORDER_MARK) {
      // Triton reads config.pbtxt with protobuf's TextFormat::ParseFromString as it is (core src/filesystem/api.cc:
      // 591-604), and protobuf's tokenizer takes the BOM for a character: protoc 3.21's text parser answers
      // "1:1: Interpreting non ascii codepoint 239." and "Expected identifier, got: \xEF", so the load fails with
      // "failed to read text proto". Reported once, here; the rest is parsed as if the BOM were not there (the
      // scanner skips it), so the model is still understood and no rule reports a cascade of it.
      this.report(
        { line: 1, column: 1, offset: 0 },
        'byte-order-mark',
        'The file starts with a UTF-8 byte order mark (bytes EF BB BF), which protobuf\'s text parser in Triton refuses ' +
          '("Interpreting non ascii codepoint 239"), so the model fails to load ("failed to read text proto"). ' +
          'Save config.pbtxt as UTF-8 without BOM.',
      );
    }
    try {
      this.positions.set(config, '', this.token.offset);
      this.parseFields(config, this.schema.root, undefined, 0);
    } catch (err) {
      if (!(err instanceof SyntaxStop)) throw err;
    }
    return { config, diagnostics: this.diagnostics, positions: this.positions };
  }

  // ---- messages -------------------------------------------------------------------------------------------

  /** Parses fields until `close` (or end of input for the top level) into `target`. */
  private parseFields(target: Record<string, unknown>, messageName: string, close: string | undefined, depth: number) {
    const message = this.schema.messages[messageName]!;
    // This message's part of the parser's stacks (see givenNames), dropped when it ends.
    const { givenNames, givenLines, givenLists } = this;
    const base = givenNames.length;
    const listsBase = givenLists.length;
    let oneofs: string[] | undefined; // group, field, group, field, ...
    for (;;) {
      const tok = this.token;
      if (close === undefined ? tok.kind === 'eof' : this.isSymbol(close)) {
        if (givenLists.length > listsBase) trimLists(target, givenLists, listsBase);
        givenNames.length = givenLines.length = base;
        givenLists.length = listsBase;
        return;
      }
      if (tok.kind === 'eof') this.syntax(tok, `Expected "${close}" before the end of the file.${this.unclosed()}`);
      if (tok.kind === 'symbol' && tok.text === '[') {
        this.syntax(tok, 'Extensions and Any values ("[...]") are not part of Triton\'s ModelConfig.');
      }
      if (tok.kind !== 'identifier') {
        // A closing bracket of another kind here ("]" of the list around this block) means this block's own is missing.
        const closer = tok.kind === 'symbol' && (tok.text === ']' || tok.text === '}' || tok.text === '>');
        this.syntax(tok, `Expected identifier, got: ${this.describe(tok)}${closer ? `.${this.unclosed()}` : ''}`);
      }
      this.advance();
      const fieldName = tok.text;
      const field = message.fields[fieldName];
      if (!field) {
        const suggestion = closest(fieldName, Object.keys(message.fields));
        this.report(
          tok,
          'unknown-field',
          `Message type "inference.${messageName}" has no field named "${fieldName}".` +
            (suggestion ? ` Did you mean "${suggestion}"?` : ` Known fields: ${Object.keys(message.fields).join(', ')}.`),
        );
        this.skipUnknownValue(depth);
        this.skipSeparator();
        continue;
      }
      this.positions.set(target, fieldName, tok.offset);
      const repeated = field.kind === 'map' || field.repeated === true;
      if (!repeated) {
        // protobuf's TextFormat refuses a non-repeated field only when it is already *set* (Reflection::HasField,
        // text_format.cc:787-791 @ protocolbuffers/protobuf e712d27): a proto3 scalar holding its default is not set,
        // so `max_batch_size: 0` may be followed by `max_batch_size: 4`, but not the other way round.
        const at = givenNames.indexOf(fieldName, base);
        if (at >= 0 && this.hasField(target, fieldName, field)) {
          this.report(
            tok,
            'duplicate-field',
            `Non-repeated field "${fieldName}" is specified multiple times (already set at line ${givenLines[at]}). Keep one of them.`,
          );
        } else if (at >= 0) {
          givenLines[at] = tok.line;
        } else {
          givenNames.push(fieldName);
          givenLines.push(tok.line);
        }
        const group = (field as { oneof?: string }).oneof;
        if (group) {
          oneofs ??= [];
          const at = oneofs.indexOf(group);
          const other = at >= 0 ? oneofs[at + 1] : undefined;
          if (other !== undefined && other !== fieldName) {
            this.report(
              tok,
              'oneof-conflict',
              `Field "${fieldName}" is specified along with field "${other}", another member of oneof "${group}". ` +
                'Only one of them may be set.',
            );
          }
          if (at < 0) oneofs.push(group, fieldName);
        }
      } else if (field.kind !== 'map' && givenLists.indexOf(fieldName, listsBase) < 0) {
        givenLists.push(fieldName);
      }
      this.parseFieldValue(target, fieldName, field, depth);
      this.skipSeparator();
    }
  }

  /**
   * Reflection::HasField for a non-repeated field: messages and oneof members are set once given; a proto3 scalar
   * only when it differs from its default (for floats, by bit pattern: -0.0 is set).
   */
  private hasField(target: Record<string, unknown>, name: string, field: FieldDescriptor): boolean {
    const value = target[name];
    if (value === undefined) return false;
    if (field.kind === 'message' || field.kind === 'map' || field.oneof !== undefined) return true;
    if (field.kind === 'enum') return value !== this.schema.enums[field.enum]![0];
    return !isScalarDefault(field.type, value);
  }

  private parseFieldValue(target: Record<string, unknown>, name: string, field: FieldDescriptor, depth: number) {
    const isMessageLike = field.kind === 'map' || field.kind === 'message';
    if (this.isSymbol(':')) {
      this.advance();
    } else if (!isMessageLike) {
      this.syntax(this.token, `Expected ":", found ${this.describe(this.token)}.`);
    }
    const repeated = field.kind === 'map' || field.repeated === true;
    if (this.isSymbol('[')) {
      const open = this.token;
      if (!repeated) {
        this.report(
          open,
          'wrong-value-type',
          `Field "${name}" is not repeated: a list "[...]" cannot be given for it. Write a single value.`,
        );
      }
      this.advance();
      if (this.isSymbol(']')) {
        this.advance();
        if (field.kind !== 'map' && field.repeated && target[name] === undefined) target[name] = [];
        return;
      }
      for (;;) {
        this.parseOneValue(target, name, field, depth);
        if (this.isSymbol(',')) {
          this.advance();
          continue;
        }
        if (this.isSymbol(']')) {
          this.advance();
          return;
        }
        this.syntax(this.token, `Expected "," or "]" in the list of "${name}", found ${this.describe(this.token)}.`);
      }
    }
    this.parseOneValue(target, name, field, depth);
  }

  private parseOneValue(target: Record<string, unknown>, name: string, field: FieldDescriptor, depth: number) {
    const start = this.token;
    if (field.kind === 'map') {
      this.mapKeyOffset = undefined;
      this.mapValueOffset = undefined;
      const entry = this.parseMessageValue(name, depth, undefined, field);
      if (!entry) return;
      let map = target[name] as Record<string, unknown> | undefined;
      if (!map) target[name] = map = Object.create(null) as Record<string, unknown>;
      const key = entry.key === undefined ? defaultKey(field.key) : String(entry.key);
      if (Object.prototype.hasOwnProperty.call(map, key)) {
        this.report(
          start,
          'duplicate-map-key',
          `"${name}" has the key "${key}" more than once; protobuf keeps the last one. Remove the duplicate.`,
          'warning',
        );
      }
      map[key] = entry.value === undefined ? defaultValue(field.value) : entry.value;
      // A fault about an entry is shown at its key (`key: "pixel_values"`), where the entry is named.
      this.positions.set(map, key, this.mapKeyOffset ?? start.offset);
      if (this.mapValueOffset !== undefined) this.positions.set(map, MAP_VALUE_PREFIX + key, this.mapValueOffset);
      return;
    }
    let value: unknown;
    if (field.kind === 'message') {
      value = this.parseMessageValue(name, depth, field.message);
      if (value === undefined) return;
    } else {
      value = this.parseScalarOrEnum(name, field);
      if (value === undefined) return;
    }
    if (field.repeated) {
      const list = target[name] as unknown[] | undefined;
      this.positions.set(target, name, start.offset, list === undefined ? 0 : list.length);
      // A first element makes an array of one slot (a push into [] reserves 16); see trimLists.
      if (list === undefined) target[name] = [value];
      else list.push(value);
    } else {
      target[name] = value;
    }
  }

  /** Parses `{ ... }` or `< ... >` as the message `message`, or as one entry of the map field `map`. */
  private parseMessageValue(
    name: string,
    depth: number,
    message: string | undefined,
    map?: { readonly key: ScalarType; readonly value: ValueDescriptor },
  ): Record<string, unknown> | undefined {
    const open = this.token;
    if (!this.isSymbol('{') && !this.isSymbol('<')) {
      this.syntax(open, `Expected "{" or "<" to start the message "${map ? `${name} entry` : name}", found ${this.describe(open)}.`);
    }
    if (depth + 1 > MAX_NESTING_DEPTH) {
      this.syntax(open, `Message nesting is deeper than ${MAX_NESTING_DEPTH} levels (protobuf's recursion limit).`);
    }
    const close = open.text === '{' ? '}' : '>';
    this.advance();
    const target: Record<string, unknown> = {};
    this.positions.set(target, '', open.offset);
    this.openBlocks.push({ name, line: open.line, column: open.column });
    if (map) this.parseMapEntry(target, name, map.key, map.value, close, depth + 1);
    else this.parseFields(target, message!, close, depth + 1);
    if (!this.isSymbol(close)) this.syntax(this.token, `Expected "${close}", found ${this.describe(this.token)}.${this.unclosed()}`);
    this.openBlocks.pop();
    this.advance();
    return target;
  }

  private parseMapEntry(
    target: Record<string, unknown>,
    mapName: string,
    keyType: ScalarType,
    valueType: ValueDescriptor,
    close: string,
    depth: number,
  ) {
    while (!this.isSymbol(close)) {
      const tok = this.token;
      if (tok.kind === 'eof') this.syntax(tok, `Expected "${close}" before the end of the file.${this.unclosed()}`);
      if (tok.kind !== 'identifier') this.syntax(tok, `Expected identifier, got: ${this.describe(tok)}`);
      this.advance();
      if (tok.text !== 'key' && tok.text !== 'value') {
        this.report(tok, 'unknown-field', `Map entry of "${mapName}" has no field named "${tok.text}": write { key: ... value: ... }.`);
        this.skipUnknownValue(depth);
        this.skipSeparator();
        continue;
      }
      const descriptor: FieldDescriptor = tok.text === 'key' ? { kind: 'scalar', type: keyType } : valueType;
      // A map entry's key and value follow the same presence rule as any proto3 field (see parseFields).
      const present = target[tok.text];
      if (present !== undefined && (tok.text === 'key' ? !isScalarDefault(keyType, present) : this.hasField(target, 'value', descriptor))) {
        this.report(tok, 'duplicate-field', `Non-repeated field "${tok.text}" is specified multiple times.`);
      }
      this.positions.set(target, tok.text, tok.offset);
      if (tok.text === 'key') this.mapKeyOffset = tok.offset;
      else this.mapValueOffset = tok.offset;
      this.parseFieldValue(target, tok.text, descriptor, depth);
      if (tok.text === 'key' && typeof target.key === 'bigint') target.key = target.key.toString();
      this.skipSeparator();
    }
  }

  // ---- scalars --------------------------------------------------------------------------------------------

  private parseScalarOrEnum(name: string, field: ValueDescriptor): unknown {
    const tok = this.token;
    if (this.isSymbol('{') || this.isSymbol('<') || this.isSymbol('[')) {
      const kindName = field.kind === 'enum' ? field.enum : (field as { type: string }).type;
      this.report(tok, 'wrong-value-type', `Field "${name}" holds a ${kindName} value, not a message.`);
      this.skipUnknownValue(0);
      return undefined;
    }
    if (field.kind === 'enum') return this.parseEnum(name, field.enum);
    switch ((field as { type: ScalarType }).type) {
      case 'string':
        return this.parseString(name);
      case 'bool':
        return this.parseBool(name);
      case 'float':
      case 'double':
        return this.parseFloat(name);
      default:
        return this.parseInteger(name, (field as { type: 'int32' | 'uint32' | 'int64' | 'uint64' }).type);
    }
  }

  private parseString(name: string): string | undefined {
    const first = this.token;
    if (first.kind !== 'string') {
      this.expectValueToken(first);
      this.report(
        first,
        'wrong-value-type',
        `Expected string for field "${name}", got: ${this.describe(first)}. Put the value in double quotes.`,
      );
      this.skipScalar();
      return undefined;
    }
    if (first.value !== undefined) {
      // The common case: one literal without escapes is already the string.
      this.advance();
      if (this.token.kind !== 'string') return first.value;
      const rest = this.parseStringParts();
      return rest === undefined ? this.invalidUtf8(first, name) : first.value + rest;
    }
    const rest = this.parseStringParts();
    return rest === undefined ? this.invalidUtf8(first, name) : rest;
  }

  /** Joins adjacent string literals; undefined when escapes produce invalid UTF-8. */
  private parseStringParts(): string | undefined {
    let out = '';
    while (this.token.kind === 'string') {
      const tok = this.token;
      this.advance();
      if (tok.value !== undefined) {
        out += tok.value;
        continue;
      }
      try {
        out += utf8.decode(tok.bytes!);
      } catch {
        return undefined;
      }
    }
    return out;
  }

  private invalidUtf8(first: Token, name: string): undefined {
    this.report(
      first,
      'invalid-utf8',
      `String field "${name}" contains invalid UTF-8 data (proto3 strings must be UTF-8). Check the escape sequences.`,
    );
    return undefined;
  }

  private parseBool(name: string): boolean | undefined {
    const tok = this.token;
    this.expectValueToken(tok);
    if (tok.kind === 'identifier' && tok.text in BOOL_WORDS) {
      this.advance();
      return BOOL_WORDS[tok.text];
    }
    if (tok.kind === 'integer' && (tok.text === '0' || tok.text === '1')) {
      this.advance();
      return tok.text === '1';
    }
    this.report(tok, 'wrong-value-type', `Invalid value for boolean field "${name}". Value: "${this.valueText()}". Use true or false.`);
    this.skipScalar();
    return undefined;
  }

  /** Consumes an optional '-' and returns it with the number token after it (checked to be a value). */
  private signedValueToken(): { start: Token; negative: boolean; tok: Token } {
    const start = this.token;
    const negative = this.isSymbol('-');
    if (negative) this.advance();
    const tok = this.token;
    this.expectValueToken(tok);
    return { start, negative, tok };
  }

  private parseFloat(name: string): number | undefined {
    const { start, negative, tok } = this.signedValueToken();
    let value: number | undefined;
    if (tok.kind === 'float') value = Number(tok.text.replace(/[fF]$/, ''));
    else if (tok.kind === 'integer') value = Number(parseIntegerLiteral(tok.text));
    else if (tok.kind === 'identifier') {
      const word = tok.text.toLowerCase();
      if (word === 'inf' || word === 'infinity') value = Infinity;
      else if (word === 'nan') value = NaN;
    }
    if (value === undefined) {
      this.report(start, 'wrong-value-type', `Expected double for field "${name}", got: ${this.describe(tok)}.`);
      this.skipScalar();
      return undefined;
    }
    this.advance();
    return negative ? -value : value;
  }

  private parseInteger(name: string, type: 'int32' | 'uint32' | 'int64' | 'uint64'): number | bigint | undefined {
    const { start, negative, tok } = this.signedValueToken();
    if (tok.kind !== 'integer') {
      const what = tok.kind === 'float' ? `a floating-point number "${tok.text}"` : this.describe(tok);
      this.report(start, 'wrong-value-type', `Expected integer for ${type} field "${name}", got: ${what}.`);
      this.skipScalar();
      return undefined;
    }
    this.advance();
    // Nearly every integer is a short decimal within its type's range: a number, no BigInt made on the way.
    const small = shortDecimal(tok.text);
    if (small !== undefined) {
      const number = negative ? 0 - small : small; // 0 - 0 is 0, where -0 would be a negative zero
      const [least, most] = NUMBER_RANGES[type];
      if (number >= least && number <= most) return type === 'int64' || type === 'uint64' ? bigintOf(number) : number;
    }
    let value = parseIntegerLiteral(tok.text);
    if (negative) value = -value;
    const [min, max] = INT_RANGES[type];
    if (value < min || value > max) {
      this.report(
        start,
        'integer-out-of-range',
        `Integer out of range (${value}): field "${name}" is ${type}, which holds ${min} to ${max}.`,
      );
      return undefined;
    }
    return type === 'int64' || type === 'uint64' ? value : Number(value);
  }

  private parseEnum(name: string, enumName: string): string | undefined {
    const values = this.schema.enums[enumName]!;
    const start = this.token;
    if (start.kind === 'identifier') {
      const at = values.indexOf(start.text);
      const known = at >= 0;
      // `data_type:` left empty: the name after it is the next field's, left to be parsed (see skipScalar)
      if (known || !this.startsField()) this.advance();
      // The descriptor's own string, shared by every config: the token's text is a slice that would keep the whole
      // file's text alive as long as the config (and a copy of TYPE_FP32 per field).
      if (known) return values[at];
      if (start.text === 'TYPE_BYTES' && enumName === 'DataType') {
        this.report(
          start,
          'type-bytes',
          `Unknown enumeration value of "TYPE_BYTES" for field "${name}". ` +
            "Triton's config calls variable-length bytes TYPE_STRING (BYTES is only the name on the wire): write TYPE_STRING.",
        );
        return undefined;
      }
      const suggestion = (enumName === 'DataType' ? dataTypeAlias(start.text) : undefined) ?? closest(start.text, values);
      this.report(
        start,
        'unknown-enum-value',
        `Unknown enumeration value of "${start.text}" for field "${name}".` +
          (suggestion ? ` Did you mean "${suggestion}"?` : ` Allowed values: ${values.join(', ')}.`),
      );
      return undefined;
    }
    const number = this.parseInteger(name, 'int32');
    if (number === undefined) return undefined;
    const index = Number(number);
    if (index < 0 || index >= values.length) {
      // proto3 enums are open: TextFormat stores a number that names no value (text_format.cc, ConsumeFieldValue,
      // `!enum_type->is_closed()`), so the file parses; what Triton then does with it is not defined.
      this.report(
        start,
        'unknown-enum-number',
        `${index} is not a value of ${enumName.split('.').pop()} for field "${name}". ` +
          `protobuf accepts the number, but Triton knows no such value: use one of ${values.map((v, i) => `${v} (${i})`).join(', ')}.`,
        'warning',
      );
      return index as unknown as string;
    }
    return values[index];
  }

  // ---- token helpers --------------------------------------------------------------------------------------

  private advance(): void {
    this.token = this.scanner.next();
  }

  private isSymbol(text: string): boolean {
    return this.token.kind === 'symbol' && this.token.text === text;
  }

  /** Whether the current token is a field's name: an identifier followed by what only a field name is followed by. */
  private startsField(): boolean {
    const next = this.scanner.peek();
    return next.kind === 'symbol' && (next.text === ':' || next.text === '{' || next.text === '[' || next.text === '<');
  }

  private skipSeparator(): void {
    if (this.isSymbol(',') || this.isSymbol(';')) this.advance();
  }

  /** An invalid token (bad escape, bad number) is a syntax error wherever a value is expected. */
  private expectValueToken(tok: Token): void {
    if (tok.kind === 'invalid') this.syntax(tok, tok.error!);
    if (tok.kind === 'eof') this.syntax(tok, 'Unexpected end of file: a value is missing.');
  }

  private valueText(): string {
    return this.token.text;
  }

  /**
   * Skips one scalar value (with a sign, and adjacent strings) after a reported type error. A name followed by `:`,
   * `{`, `[` or `<` is not a value but the next field (`max_batch_size:` left empty, as in a template): it is left
   * to be parsed, so the one mistake is not reported again as errors about what follows it.
   */
  private skipScalar(): void {
    if (this.isSymbol('-')) this.advance();
    if (this.token.kind === 'string') {
      while (this.token.kind === 'string') this.advance();
      return;
    }
    if (this.token.kind === 'identifier' && this.startsField()) return;
    if (this.token.kind === 'identifier' || this.token.kind === 'integer' || this.token.kind === 'float') this.advance();
  }

  /** Skips the value of an unknown field: `: scalar`, `[...]`, `{...}` or `<...>`, checking only the bracketing. */
  private skipUnknownValue(depth: number): void {
    if (this.isSymbol(':')) this.advance();
    if (this.isSymbol('[') || this.isSymbol('{') || this.isSymbol('<')) {
      const stack: string[] = [];
      do {
        const tok = this.token;
        if (tok.kind === 'eof') this.syntax(tok, 'Unexpected end of file inside a value.');
        if (tok.kind === 'invalid') this.syntax(tok, tok.error!);
        if (tok.kind === 'symbol') {
          if (tok.text === '[' || tok.text === '{' || tok.text === '<') {
            stack.push(tok.text === '[' ? ']' : tok.text === '{' ? '}' : '>');
            if (depth + stack.length > MAX_NESTING_DEPTH) {
              this.syntax(tok, `Message nesting is deeper than ${MAX_NESTING_DEPTH} levels (protobuf's recursion limit).`);
            }
          } else if (tok.text === ']' || tok.text === '}' || tok.text === '>') {
            if (stack.pop() !== tok.text) this.syntax(tok, `Unbalanced "${tok.text}".`);
          }
        }
        this.advance();
      } while (stack.length > 0);
      return;
    }
    const tok = this.token;
    this.expectValueToken(tok);
    if (tok.kind === 'symbol' && tok.text !== '-') this.syntax(tok, `Expected a value, found ${this.describe(tok)}.`);
    this.skipScalar();
  }

  private describe(tok: Token): string {
    if (tok.kind === 'eof') return 'end of file';
    if (tok.kind === 'invalid') return tok.error!;
    return `"${tok.text}"`;
  }

  private syntax(tok: Token, message: string): never {
    this.report(tok, 'syntax-error', message);
    throw new SyntaxStop();
  }

  /** " The "input" block opened at 3:3 is never closed: ..." for the innermost message being parsed, or "". */
  private unclosed(): string {
    const block = this.openBlocks[this.openBlocks.length - 1];
    if (!block) return '';
    return (
      ` The "${block.name}" block opened at line ${block.line}, column ${block.column} is never closed: ` +
      `add its closing "}" (or ">") where the block ends.`
    );
  }

  private report(
    tok: { line: number; column: number; offset: number },
    code: string,
    message: string,
    severity: 'error' | 'warning' = 'error',
  ) {
    const source = { file: this.options.file ?? 'config.pbtxt', model: this.options.model, text: this.text };
    this.diagnostics.push(diagnostic(severity, code, message, source, tok));
  }
}

/**
 * The value of a decimal literal of at most 15 digits without a leading zero (below 2^53, so exact as a number), else
 * undefined (hex, octal, longer: parseIntegerLiteral).
 */
function shortDecimal(text: string): number | undefined {
  const length = text.length;
  if (length > 15 || (length > 1 && text.charCodeAt(0) === CH_0)) return undefined;
  let value = 0;
  for (let i = 0; i < length; i++) {
    const digit = text.charCodeAt(i) - CH_0;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return value;
}

/** The range of each integer type as numbers, for shortDecimal's values (all within 64 bits). */
const NUMBER_RANGES: Record<'int32' | 'uint32' | 'int64' | 'uint64', readonly [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int64: [-Infinity, Infinity],
  uint64: [0, Infinity],
};

/**
 * int64 values -1 to 1024 (dims, batch sizes, counts), made once: a BigInt is a heap object, and the same few values
 * fill every config.
 */
const SMALL_BIGINTS: readonly bigint[] = Array.from({ length: 1026 }, (_, i) => BigInt(i - 1));

function bigintOf(value: number): bigint {
  return value >= -1 && value <= 1024 ? SMALL_BIGINTS[value + 1]! : BigInt(value);
}

/**
 * Gives the repeated fields `names` (from `from` on) of `target` arrays of their length: a push reserves room for 17
 * elements, and the parsed configs of ten thousand models are kept to the end of a validation.
 */
function trimLists(target: Record<string, unknown>, names: readonly string[], from: number): void {
  for (let i = from; i < names.length; i++) {
    const name = names[i]!;
    const list = target[name] as unknown[] | undefined; // none when no value of it parsed
    if (list !== undefined && list.length > 1) target[name] = list.slice();
  }
}

function parseIntegerLiteral(text: string): bigint {
  // Short decimal literals (nearly all of them) skip the general path.
  if (text.length < 16 && (text.length === 1 || text.charCodeAt(0) !== 48)) return BigInt(Number(text));
  if (/^0[xX]/.test(text)) return BigInt(text);
  if (text.length > 1 && text.startsWith('0')) return BigInt(`0o${text.slice(1)}`);
  return BigInt(text);
}

/** Whether a parsed scalar holds its proto3 default (map keys of integer type are kept as decimal strings). */
function isScalarDefault(type: ScalarType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return value === '';
    case 'bool':
      return value === false || value === 'false';
    case 'float':
      return Object.is(Math.fround(Number(value)), 0);
    case 'double':
      return Object.is(value, 0);
    default:
      return value === 0 || value === 0n || value === '0';
  }
}

function defaultKey(type: ScalarType): string {
  return type === 'string' ? '' : type === 'bool' ? 'false' : '0';
}

function defaultValue(value: ValueDescriptor): unknown {
  if (value.kind === 'message') return {};
  if (value.kind === 'enum') return undefined;
  switch (value.type) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'int64':
    case 'uint64':
      return 0n;
    default:
      return 0;
  }
}

// Names other frameworks give Triton's data types (numpy/torch `float32`, `half`, `double`, `bool`...): spelled
// Triton's way, the edit distance would pick a wrong neighbour (`TYPE_FLOAT32` is nearer `TYPE_UINT32` than
// `TYPE_FP32`). The values are those of DataType in common protobuf/model_config.proto.
const DATA_TYPE_ALIASES: Readonly<Record<string, string>> = {
  FLOAT: 'TYPE_FP32',
  FLOAT32: 'TYPE_FP32',
  SINGLE: 'TYPE_FP32',
  HALF: 'TYPE_FP16',
  FLOAT16: 'TYPE_FP16',
  DOUBLE: 'TYPE_FP64',
  FLOAT64: 'TYPE_FP64',
  BFLOAT16: 'TYPE_BF16',
  BOOLEAN: 'TYPE_BOOL',
  INT: 'TYPE_INT32',
  LONG: 'TYPE_INT64',
  BYTE: 'TYPE_UINT8',
  CHAR: 'TYPE_INT8',
  STR: 'TYPE_STRING',
  OBJECT: 'TYPE_STRING',
};

/** `TYPE_FLOAT32`, `FLOAT32`, `float32` -> `TYPE_FP32`; undefined for a name that is no known alias. */
function dataTypeAlias(text: string): string | undefined {
  return DATA_TYPE_ALIASES[text.toUpperCase().replace(/^TYPE_/, '')];
}
