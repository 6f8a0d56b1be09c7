// Words for commands the tool prints for people to paste (`mme-deploy push ...`, `aws s3api ...`). A bottom module:
// library messages and the CLI's hints quote with the same function.

/**
 * `word` as one POSIX shell word: unchanged when it holds only characters no shell treats specially, else in single
 * quotes (a quote inside becomes '\''). The empty string is ''.
 */
export function shellQuote(word: string): string {
  if (/^[\w.,:@%+=/-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Several words as one command line. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
