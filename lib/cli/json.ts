// How every command prints `--json`: one document, indented by two spaces, bigints as digits, dates as ISO strings.
// A command that fails prints one error object instead: {"error": {"code": "UNREADABLE", "message": "..."}}.

/** The text for stdout, ending with a newline. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n';
}

/** The one JSON document of a failed command: a stable code (ERROR_CODES, USAGE, INTERNAL, ...) and the message. */
export function errorJson(code: string, message: string, details: Record<string, unknown> = {}): string {
  return toJson({ error: { code, message, ...details } });
}

/** Whether the command line asks for JSON (`--json` before any `--`). */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}
