// Tokens of protobuf text format (the syntax of config.pbtxt), each with its offset, line and column.
// Scanning never throws: malformed input becomes an `invalid` token carrying the reason.

export type TokenKind = 'identifier' | 'integer' | 'float' | 'string' | 'symbol' | 'eof' | 'invalid';

export interface Token {
  readonly kind: TokenKind;
  /** The source text of the token. */
  readonly text: string;
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  /** For strings: the decoded value when it is plain text (no escapes), else undefined and `bytes` holds it. */
  readonly value: string | undefined;
  /** For strings with escapes: the decoded bytes. */
  readonly bytes: Uint8Array | undefined;
  /** For invalid tokens: why. */
  readonly error: string | undefined;
}

// Character codes the scanner compares `charCodeAt` against, named (as node-jsonc-parser's CharacterCodes). Plain
// module constants: V8 folds them like literals, so naming them costs nothing (bench/validate.js, parse alone).
const CH_BELL = 0x07;
const CH_BACKSPACE = 0x08;
const CH_TAB = 0x09;
const CH_LINE_FEED = 0x0a;
const CH_VERTICAL_TAB = 0x0b;
const CH_FORM_FEED = 0x0c;
const CH_CARRIAGE_RETURN = 0x0d;
const CH_SPACE = 0x20;
const CH_DOUBLE_QUOTE = 0x22;
const CH_HASH = 0x23;
const CH_SINGLE_QUOTE = 0x27;
const CH_PLUS = 0x2b;
const CH_MINUS = 0x2d;
const CH_DOT = 0x2e;
const CH_0 = 0x30;
const CH_9 = 0x39;
const CH_QUESTION_MARK = 0x3f;
const CH_UPPER_A = 0x41;
const CH_UPPER_E = 0x45;
const CH_UPPER_F = 0x46;
const CH_UPPER_X = 0x58;
const CH_UPPER_Z = 0x5a;
const CH_BACKSLASH = 0x5c;
const CH_UNDERSCORE = 0x5f;
const CH_LOWER_A = 0x61;
const CH_LOWER_E = 0x65;
const CH_LOWER_F = 0x66;
const CH_LOWER_X = 0x78;
const CH_LOWER_Z = 0x7a;
/** The first code unit of a UTF-16 surrogate pair (an astral character). */
const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;

function isLetter(c: number): boolean {
  return (c >= CH_UPPER_A && c <= CH_UPPER_Z) || (c >= CH_LOWER_A && c <= CH_LOWER_Z) || c === CH_UNDERSCORE;
}
function isDigit(c: number): boolean {
  return c >= CH_0 && c <= CH_9;
}
function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= CH_UPPER_A && c <= CH_UPPER_F) || (c >= CH_LOWER_A && c <= CH_LOWER_F);
}
function isWhitespace(c: number): boolean {
  return (
    c === CH_SPACE ||
    c === CH_TAB ||
    c === CH_LINE_FEED ||
    c === CH_CARRIAGE_RETURN ||
    c === CH_VERTICAL_TAB ||
    c === CH_FORM_FEED
  );
}

/** C escapes with one character after the backslash, and the byte each stands for. */
const SIMPLE_ESCAPES: Record<string, number> = {
  a: CH_BELL,
  b: CH_BACKSPACE,
  f: CH_FORM_FEED,
  n: CH_LINE_FEED,
  r: CH_CARRIAGE_RETURN,
  t: CH_TAB,
  v: CH_VERTICAL_TAB,
  '\\': CH_BACKSLASH,
  "'": CH_SINGLE_QUOTE,
  '"': CH_DOUBLE_QUOTE,
  '?': CH_QUESTION_MARK,
};

export class Scanner {
  private pos = 0;
  private line = 1;
  private lineStart = 0;

  constructor(private readonly text: string) {
    // A UTF-8 byte order mark is skipped (the parser reports it once); columns count from after it, as editors show.
    if (text.charCodeAt(0) === 0xfeff) this.pos = this.lineStart = 1;
  }

  private start = 0;
  private startLine = 1;
  private startColumn = 1;

  /** The token from `this.start` to the current position; every token has the same shape (fast property access). */
  private make(kind: TokenKind, value?: string, bytes?: Uint8Array, error?: string): Token {
    return {
      kind,
      text: this.text.slice(this.start, this.pos),
      offset: this.start,
      line: this.startLine,
      column: this.startColumn,
      value,
      bytes,
      error,
    };
  }

  /** The token `next()` would return, without consuming it. */
  peek(): Token {
    const { pos, line, lineStart, start, startLine, startColumn } = this;
    const tok = this.next();
    Object.assign(this, { pos, line, lineStart, start, startLine, startColumn });
    return tok;
  }

  next(): Token {
    this.skipWhitespaceAndComments();
    const start = (this.start = this.pos);
    this.startLine = this.line;
    this.startColumn = start - this.lineStart + 1;
    const text = this.text;
    if (start >= text.length) return this.make('eof');
    const c = text.charCodeAt(start);

    if (isLetter(c)) {
      let pos = start + 1;
      const end = text.length;
      while (pos < end) {
        const d = text.charCodeAt(pos);
        if (!isLetter(d) && !isDigit(d)) break;
        pos++;
      }
      this.pos = pos;
      return this.make('identifier');
    }
    if (isDigit(c) || (c === CH_DOT && isDigit(text.charCodeAt(start + 1)))) return this.number();
    if (c === CH_DOUBLE_QUOTE || c === CH_SINGLE_QUOTE) return this.string();
    this.pos++;
    if (SYMBOLS.has(c)) return this.make('symbol');
    // Astral characters are two code units: report the whole character.
    if (c >= HIGH_SURROGATE_FIRST && c <= HIGH_SURROGATE_LAST && this.pos < text.length) this.pos++;
    return this.make('invalid', undefined, undefined, `Unexpected character "${text.slice(start, this.pos)}".`);
  }

  private skipWhitespaceAndComments(): void {
    const text = this.text;
    const end = text.length;
    let pos = this.pos;
    while (pos < end) {
      const c = text.charCodeAt(pos);
      if (c === CH_LINE_FEED) {
        pos++;
        this.line++;
        this.lineStart = pos;
      } else if (c === CH_SPACE || isWhitespace(c)) {
        pos++;
      } else if (c === CH_HASH) {
        while (pos < end && text.charCodeAt(pos) !== CH_LINE_FEED) pos++;
      } else {
        break;
      }
    }
    this.pos = pos;
  }

  private number(): Token {
    const text = this.text;
    const start = this.pos;
    let kind: TokenKind = 'integer';
    let error: string | undefined;
    const c0 = text.charCodeAt(start);
    const c1 = text.charCodeAt(start + 1);
    if (c0 === CH_0 && (c1 === CH_LOWER_X || c1 === CH_UPPER_X)) {
      this.pos += 2;
      if (!isHexDigit(text.charCodeAt(this.pos))) error = '"0x" must be followed by hex digits.';
      while (isHexDigit(text.charCodeAt(this.pos))) this.pos++;
    } else if (c0 === CH_0 && isDigit(c1)) {
      while (isDigit(text.charCodeAt(this.pos))) this.pos++;
      if (/[89]/.test(text.slice(start, this.pos))) error = 'Numbers starting with leading zero must be in octal.';
    } else {
      while (isDigit(text.charCodeAt(this.pos))) this.pos++;
      if (text.charCodeAt(this.pos) === CH_DOT) {
        kind = 'float';
        this.pos++;
        while (isDigit(text.charCodeAt(this.pos))) this.pos++;
      }
      const e = text.charCodeAt(this.pos);
      if (e === CH_LOWER_E || e === CH_UPPER_E) {
        kind = 'float';
        this.pos++;
        const sign = text.charCodeAt(this.pos);
        if (sign === CH_PLUS || sign === CH_MINUS) this.pos++;
        if (!isDigit(text.charCodeAt(this.pos))) error = '"e" must be followed by exponent.';
        while (isDigit(text.charCodeAt(this.pos))) this.pos++;
      }
      const f = text.charCodeAt(this.pos);
      if (f === CH_LOWER_F || f === CH_UPPER_F) {
        kind = 'float';
        this.pos++;
      }
    }
    const after = text.charCodeAt(this.pos);
    if (!error && (isLetter(after) || isDigit(after) || after === CH_DOT)) {
      while (this.pos < text.length && (isLetter(text.charCodeAt(this.pos)) || isDigit(text.charCodeAt(this.pos)))) {
        this.pos++;
      }
      error = 'Need space between number and identifier.';
    }
    return error ? this.make('invalid', undefined, undefined, error) : this.make(kind);
  }

  private string(): Token {
    const text = this.text;
    const quote = text.charCodeAt(this.pos);
    this.pos++;
    const contentStart = this.pos;
    let simple = true;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === quote) break;
      if (c === CH_LINE_FEED) return this.make('invalid', undefined, undefined, 'String literals cannot cross line boundaries.');
      if (c === CH_BACKSLASH) {
        simple = false;
        this.pos += 2;
        continue;
      }
      this.pos++;
    }
    if (this.pos >= text.length) return this.make('invalid', undefined, undefined, 'Unexpected end of string.');
    const content = text.slice(contentStart, this.pos);
    this.pos++;
    if (simple) return this.make('string', content);
    const decoded = decodeEscapes(content);
    if (typeof decoded === 'string') return this.make('invalid', undefined, undefined, decoded);
    return this.make('string', undefined, decoded);
  }
}

const SYMBOLS = new Set([...'{}<>[]:,;-/'].map((ch) => ch.charCodeAt(0)));

/** Applies C escapes to a string literal's content; returns the bytes, or an error message. */
function decodeEscapes(content: string): Uint8Array | string {
  const out: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < content.length; ) {
    const ch = content[i]!;
    if (ch !== '\\') {
      const cp = content.codePointAt(i)!;
      const chunk = String.fromCodePoint(cp);
      if (cp < 128) out.push(cp);
      else for (const b of encoder.encode(chunk)) out.push(b);
      i += chunk.length;
      continue;
    }
    const e = content[i + 1];
    if (e === undefined) return 'Invalid escape sequence in string literal.';
    if (e in SIMPLE_ESCAPES) {
      out.push(SIMPLE_ESCAPES[e]!);
      i += 2;
    } else if (e >= '0' && e <= '7') {
      let j = i + 1;
      let value = 0;
      while (j < content.length && j < i + 4 && content[j]! >= '0' && content[j]! <= '7') {
        value = value * 8 + (content.charCodeAt(j) - CH_0);
        j++;
      }
      if (value > 255) return `Octal escape "\\${content.slice(i + 1, j)}" is out of range.`;
      out.push(value);
      i = j;
    } else if (e === 'x' || e === 'X') {
      let j = i + 2;
      while (j < content.length && j < i + 4 && isHexDigit(content.charCodeAt(j))) j++;
      if (j === i + 2) return 'Expected hex digits for escape sequence.';
      out.push(parseInt(content.slice(i + 2, j), 16));
      i = j;
    } else if (e === 'u' || e === 'U') {
      const width = e === 'u' ? 4 : 8;
      const hex = content.slice(i + 2, i + 2 + width);
      if (hex.length !== width || !/^[0-9a-fA-F]+$/.test(hex)) return `Expected ${width} hex digits after "\\${e}".`;
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return `"\\${e}${hex}" is not a valid Unicode code point.`;
      for (const b of encoder.encode(String.fromCodePoint(cp))) out.push(b);
      i += 2 + width;
    } else {
      return `Invalid escape sequence "\\${e}" in string literal.`;
    }
  }
  return Uint8Array.from(out);
}
