// The caret excerpt under a diagnostic: the offending line and a caret under the column.

/** The line holding `offset`, and a caret under `column`. */
export function caretExcerpt(text: string, offset: number, column: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  let end = text.indexOf('\n', offset);
  if (end < 0) end = text.length;
  let line = text.slice(start, end).replace(/\r$/, '');
  let caretAt = column - 1;
  if (line.length > 160) {
    const from = Math.max(0, caretAt - 80);
    line = line.slice(from, from + 160);
    caretAt -= from;
  }
  const pad = line.slice(0, caretAt).replace(/[^\t]/g, ' ');
  return `${line}\n${pad}^`;
}
