// Text from outside (config lines, file and model names, messages quoted from disk, server error pages) never reaches
// a terminal with raw control characters: they would move the cursor, recolour it, retitle the window or hide text.
// escapeControl is the one escaping function; program.ts passes every human output through it, and report-format.ts
// uses it on caret excerpts so the caret stays under its column.

// C0 controls but tab and newline, DEL, C1 controls (U+009B is a CSI on some terminals), and the bidirectional
// overrides and isolates that reorder what is shown (CVE-2021-42574).
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every control character shown as an escape: `\x1b` for C0 controls and DEL (as bash's $'...' does),
 * `\u009b` for the others (also a valid JSON escape, so JSON stays JSON). Tab and newline are kept.
 */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

/**
 * JSON text (a whole `--json` document) with the same characters escaped as JSON escapes, `\u007f`: valid JSON that
 * parses back to the very same strings, and still safe on a terminal. JSON.stringify has escaped C0 controls already;
 * the others can only stand inside strings, where a `\uXXXX` escape means the character itself.
 */
export function escapeJsonText(json: string): string {
  return json.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `text` escaped as escapeControl does, and its line breaks too (`\n`, `\r`): a name, a path or a server's message
 * put inside a one-line message can never split it and start a forged `mme-deploy: ...` line.
 */
export function escapeLine(text: string): string {
  return escapeControl(text).replace(/\n/g, '\\n');
}

function escapeOne(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** A caret excerpt (`line\n   ^`) with its line escaped and the caret moved to stay under the same character. */
export function escapeExcerpt(excerpt: string): string {
  const newline = excerpt.lastIndexOf('\n');
  if (newline < 0) return escapeControl(excerpt);
  const line = excerpt.slice(0, newline);
  const caretLine = excerpt.slice(newline + 1);
  const caretAt = caretLine.indexOf('^');
  if (caretAt < 0) return escapeControl(excerpt);
  // The pad has one character (a space, or a tab under a tab) per UTF-16 unit of the line before the caret.
  const before = line.slice(0, caretAt).split('');
  const pad = before.map((c) => (c === '\t' ? '\t' : ' '.repeat(escapeControl(c).length))).join('');
  return `${escapeControl(line)}\n${pad}^`;
}
