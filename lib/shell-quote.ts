// Words for commands the tool prints for people to paste (`mme-deploy push ...`, `aws s3api ...`). A bottom module:
// library messages and the CLI's hints quote with the same function.

/**
 * `word` as one POSIX shell word: unchanged when it holds only characters no shell treats specially, else in single
 * quotes (a quote inside becomes '\''). The empty string is ''.
 */
export function shellQuote(word: string): string {
  if (/^[\w.,:@%+=/-]+$/.test(word)) return word;
  // A newline or another control character: bash's $'...' (also in POSIX.1-2024 sh), so the command stays one line.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(word)) return `$'${word.replace(/[\\'\u0000-\u001f\u007f]/g, ansiCEscape)}'`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function ansiCEscape(char: string): string {
  const named: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\n': '\\n', '\t': '\\t', '\r': '\\r' };
  return named[char] ?? `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

/** Several words as one command line. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
