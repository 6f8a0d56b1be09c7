// Where each field of a protobuf text-format file is written (offsets of its name and value), and edits made at
// those offsets: a config.pbtxt changed in place keeps its comments, order and layout, which a reprinted one loses
// (and the printer here, print.ts, writes JSON, not text format). Only for text the parser accepted.

import { Scanner, type Token } from './text-format-scanner';

/** One value of a field: a scalar (number, word, strings written side by side) or a message with its fields. */
export type TextValue =
  | { readonly kind: 'scalar'; readonly start: number; readonly end: number; readonly text: string }
  | { readonly kind: 'message'; readonly start: number; readonly end: number; readonly fields: readonly TextField[] };

/** One occurrence of a field: `name: value`, `name { ... }` or `name: [v, v]` (a list gives one value per element). */
export interface TextField {
  readonly name: string;
  /** Offset of the name. */
  readonly start: number;
  /** Offset just past the value (the closing bracket of a list), and past a `,` or `;` that follows it. */
  readonly end: number;
  readonly values: readonly TextValue[];
}

/** A replacement of the text between two offsets. */
export interface TextEdit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

class Malformed extends Error {}

/**
 * The fields of a text-format message, top level first, each with its nested fields. Undefined when the text is not
 * well-formed (the parser reports why; callers edit only text it accepted).
 */
export function textFields(text: string): TextField[] | undefined {
  const scanner = new Scanner(text);
  let token: Token = scanner.next();
  const advance = () => (token = scanner.next());
  const isSymbol = (s: string) => token.kind === 'symbol' && token.text === s;

  const parseFields = (close: string | undefined): TextField[] => {
    const out: TextField[] = [];
    for (;;) {
      if (close === undefined ? token.kind === 'eof' : isSymbol(close)) return out;
      if (token.kind !== 'identifier') throw new Malformed();
      const name = token.text;
      const start = token.offset;
      advance();
      if (isSymbol(':')) advance();
      const values: TextValue[] = [];
      let end: number;
      if (isSymbol('[')) {
        advance();
        while (!isSymbol(']')) {
          values.push(parseValue());
          if (isSymbol(',')) advance();
          else if (!isSymbol(']')) throw new Malformed();
        }
        end = token.offset + 1;
        advance();
      } else {
        const value = parseValue();
        values.push(value);
        end = value.end;
      }
      if (isSymbol(',') || isSymbol(';')) {
        end = token.offset + 1;
        advance();
      }
      out.push({ name, start, end, values });
    }
  };

  const parseValue = (): TextValue => {
    const start = token.offset;
    if (isSymbol('{') || isSymbol('<')) {
      const close = token.text === '{' ? '}' : '>';
      advance();
      const fields = parseFields(close);
      const end = token.offset + 1;
      advance();
      return { kind: 'message', start, end, fields };
    }
    if (isSymbol('-')) advance();
    if (token.kind === 'eof' || token.kind === 'symbol' || token.kind === 'invalid') throw new Malformed();
    let end = token.offset + token.text.length;
    const wasString = token.kind === 'string';
    advance();
    // Adjacent strings are one value ("a" "b" is "ab").
    while (wasString && token.kind === 'string') {
      end = token.offset + token.text.length;
      advance();
    }
    return { kind: 'scalar', start, end, text: text.slice(start, end) };
  };

  try {
    return parseFields(undefined);
  } catch (err) {
    if (err instanceof Malformed) return undefined;
    throw err;
  }
}

/** The fields named `name` among `fields`, in the order written. */
export function fieldsNamed(fields: readonly TextField[], name: string): TextField[] {
  return fields.filter((f) => f.name === name);
}

/** The values of every occurrence of `name`, in the order written: the elements of a repeated field. */
export function valuesOf(fields: readonly TextField[], name: string): TextValue[] {
  return fieldsNamed(fields, name).flatMap((f) => f.values);
}

/**
 * The edit that removes a field. A field alone on its lines goes with those lines; one among others on a line goes
 * with the spaces after it, so `{ kind: KIND_GPU gpus: [ 0 ] }` becomes `{ kind: KIND_GPU }`.
 */
export function removeField(text: string, field: TextField): TextEdit {
  const lineStart = text.lastIndexOf('\n', field.start - 1) + 1;
  let after = field.end;
  while (after < text.length && (text[after] === ' ' || text[after] === '\t')) after++;
  const aloneBefore = /^[ \t]*$/.test(text.slice(lineStart, field.start));
  const atLineEnd = after >= text.length || text[after] === '\n' || text[after] === '\r' || text[after] === '#';
  if (aloneBefore && atLineEnd && text[after] !== '#') {
    const lineEnd = text.indexOf('\n', after);
    return { start: lineStart, end: lineEnd < 0 ? text.length : lineEnd + 1, text: '' };
  }
  if (atLineEnd && text[after] !== '#') {
    // Last on a line after other fields: the spaces before it go, so no line is left ending in a space.
    let before = field.start;
    while (before > lineStart && (text[before - 1] === ' ' || text[before - 1] === '\t')) before--;
    return { start: before, end: after, text: '' };
  }
  return { start: field.start, end: after, text: '' };
}

/** The edit that writes `replacement` in place of a value. */
export function replaceValue(value: TextValue, replacement: string): TextEdit {
  return { start: value.start, end: value.end, text: replacement };
}

/** `text` with `edits` made (they must not overlap; any order). */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start);
  let out = text;
  let limit = Infinity;
  for (const edit of sorted) {
    if (edit.end > limit) throw new Error('overlapping text edits');
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
    limit = edit.start;
  }
  return out;
}
