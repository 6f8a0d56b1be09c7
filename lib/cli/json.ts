// How every command prints `--json`: one document, indented by two spaces, bigints as digits, dates as ISO strings.

/** The text for stdout, ending with a newline. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n';
}
