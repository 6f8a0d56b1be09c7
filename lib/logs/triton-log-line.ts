// One line of a Triton container's output, split into its prefix (level, time, pid, source file:line) and message.
// Pure and allocation-light: `mme-deploy logs` runs it on every line of an endpoint's log streams.
//
// Formats, from the sources (triton-inference-server/common @ 83adf7c, python_backend @ f9088ff):
// - Triton default: `I1130 15:37:28.123456 1 model_lifecycle.cc:849] message` — level letter E/W/I
//   (include/triton/common/logging.h:67), MMDD HH:MM:SS.uuuuuu in UTC (src/logging.cc:106-110), pid, the source
//   file's base name (logging.h:199-202) and line, "] " (logging.cc:131-133).
// - Triton `--log-format ISO8601`: `2026-11-30T15:37:28Z I 1 model_lifecycle.cc:849] message` (logging.cc:113-118,
//   137-140).
// - Since common c4f730f (2024-05, Triton 24.06) the message is JSON-escaped by default: `] "successfully loaded
//   'x'"`, newlines as \n (logging.cc:179-181, TritonJson::SerializeString); TRITON_SERVER_ESCAPE_LOG_MESSAGES=0 or
//   older images print it raw, a multi-line message then spanning several lines. Tables are never escaped
//   (logging.h LOG_TABLE_INFO).
// - The python backend stub, before it can send its log to the server, prints the same prefix with its own pid and
//   one more space: `I1130 15:37:28.123456 4242 pb_stub.cc:389]  Failed to initialize Python stub: ...`
//   (src/pb_stub_log.cc:95-101), never escaped.
// - ONNX Runtime's own logger, which the onnxruntime backend leaves on stderr:
//   `2023-12-07 10:14:43.214806225 [E:onnxruntime:, sequential_executor.cc:514 ExecuteKernel] message`
//   (as recorded in microsoft/onnxruntime#18743).

export type TritonLevel = 'error' | 'warning' | 'info';

export interface TritonLogLine {
  readonly level: TritonLevel;
  /** Milliseconds since the epoch (UTC), from the prefix; the year comes from `year` for the default format. */
  readonly timestamp: number;
  readonly pid?: number;
  /** `model_lifecycle.cc:849`, as the prefix prints it. */
  readonly source: string;
  /** The message, unescaped when Triton escaped it. May hold newlines. */
  readonly message: string;
  /**
   * Whether Triton JSON-escaped the message. An escaped message is complete on its line; a raw one may continue on
   * the lines that follow without a prefix.
   */
  readonly escaped: boolean;
}

const DEFAULT_PREFIX = /^([IWE])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) (\d+) ([^\s:\]]+:\d+)\] ?/;
const ISO_PREFIX = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z ([IWE]) (\d+) ([^\s:\]]+:\d+)\] ?/;
const ORT_PREFIX = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+) \[([VIWEF]):onnxruntime:[^,\]]*, ([^\]]+)\] ?/;

const LEVELS: Record<string, TritonLevel> = { E: 'error', F: 'error', W: 'warning', I: 'info', V: 'info' };

/**
 * Splits a line into prefix and message; undefined for a line without a prefix (a continuation of the line before,
 * a table row, or output of something other than Triton).
 *
 * @param year the year of the default format's MMDD date (CloudWatch gives the real timestamp; this is for plain files)
 */
export function parseTritonLine(line: string, year: number = new Date().getUTCFullYear()): TritonLogLine | undefined {
  const first = line.charCodeAt(0);
  if (first === 0x49 /* I */ || first === 0x57 /* W */ || first === 0x45 /* E */) {
    const m = DEFAULT_PREFIX.exec(line);
    if (!m) return undefined;
    const timestamp = Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7]) / 1000);
    return { level: LEVELS[m[1]!]!, timestamp, pid: Number(m[8]), source: m[9]!, ...unescape(line.slice(m[0].length)) };
  }
  if (first < 0x30 || first > 0x39) return undefined;
  let m = ISO_PREFIX.exec(line);
  if (m) {
    const timestamp = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
    return { level: LEVELS[m[7]!]!, timestamp, pid: Number(m[8]), source: m[9]!, ...unescape(line.slice(m[0].length)) };
  }
  m = ORT_PREFIX.exec(line);
  if (m) {
    const millis = Number(m[7]!.slice(0, 3).padEnd(3, '0'));
    const timestamp = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), millis);
    return { level: LEVELS[m[8]!]!, timestamp, source: m[9]!, message: line.slice(m[0].length).trimEnd(), escaped: false };
  }
  return undefined;
}

/** Undoes Triton's JSON escaping of a message (`"..."`); anything else is returned as it is, minus trailing blanks. */
function unescape(message: string): { message: string; escaped: boolean } {
  const text = message.trim();
  if (text.length >= 2 && text.charCodeAt(0) === 0x22 && text.charCodeAt(text.length - 1) === 0x22) {
    try {
      // Several SageMaker messages end in std::endl, which the escaping turns into a trailing "\n".
      return { message: (JSON.parse(text) as string).trimEnd(), escaped: true };
    } catch {
      // A raw message that merely starts and ends with a quote.
    }
  }
  return { message: text, escaped: false };
}
