// Turns the log lines of a multi-model endpoint's instances into events: loads, failures with their cause, evictions,
// python tracebacks joined to the model that raised them. Pure: lines in, events out; it reads no file and calls no
// service, so `logs`, `status` and any other tool feed it lines from wherever they come.
//
// How the log ties a Triton model to its TargetModel (triton-inference-server/server:src/sagemaker_server.cc:947-1145):
// SageMaker extracts each TargetModel into /opt/ml/models/<hash>/model and asks the container to load it under an
// opaque <hash>; the front end registers that directory as a model repository, maps the archive's model directory to
// the TargetModel name and loads it by that name. With model namespacing on (`serve`'s default) the core prints
// every model as `<repository>::<name>`, so `/opt/ml/models/<hash>/model::sentiment.tar.gz` is the TargetModel
// itself and `/opt/ml/models/<hash>/model::preprocess` one of its composing models. The parser learns <hash> ->
// TargetModel from "Received model_name: <hash>" / "Model repository registered: <path>" next to "Loading SageMaker
// TargetModel: <name>", and from any namespaced id whose name is a TargetModel the front end announced (loading,
// unloading or invoking it). Without namespacing, a model is tied to the one TargetModel loading on its instance at
// the time, or to none when several load at once. Python frames (/opt/ml/models/<hash>/model/<dir>/1/model.py)
// name both the archive and the model directory.

import { ensembleDependencyFailure, knownFailure } from './known-failures';
import { FAILURE_KINDS, instanceOfStream, KnownFailure, LogEvent, LogEventKind, LogRecord } from './log-event';
import { classifyMessage, classifyRawLine, Fact, ModelId } from './log-messages';
import { archivePathOf, PythonError, splitPythonError } from './python-traceback';
import { parseTritonLine, TritonLevel, TritonLogLine } from './triton-log-line';

/** How long a python error seen in the stub's output waits for the load or request failure it belongs to. */
const JOIN_WINDOW_MS = 30_000;
/** How close "Received model_name" / "Model repository registered" must follow the load request they belong to. */
const PAIRING_WINDOW_MS = 10_000;

export interface ParserOptions {
  /** Year of the default Triton prefix's MMDD dates, for lines without a CloudWatch timestamp. @default the current UTC year */
  readonly year?: number;
}

export interface DrainOptions {
  /**
   * Close everything: lines still open become events, held lines and unjoined python errors are reported.
   * @default false
   */
  readonly final?: boolean;
  /**
   * The streams that got lines in the last read: the message still open in every other stream is complete.
   * @default every stream is still active
   */
  readonly activeStreams?: Iterable<string>;
  /** Now, in ms: unjoined python errors older than the join window are reported. @default no time-based release */
  readonly now?: number;
}

/** Lines of one message: a prefixed line and the unprefixed lines that continue it, or a raw python traceback. */
interface OpenMessage {
  readonly time: number;
  readonly line?: TritonLogLine;
  readonly extra: string[];
  /** A raw `Traceback (most recent call last):` block, ended by its exception line. */
  readonly traceback: boolean;
}

/** A line kept back while a load is in flight, to join the failure it explains. */
interface HeldLine {
  readonly time: number;
  readonly level: TritonLevel;
  readonly text: string;
  readonly source?: string;
}

/** A python error from the stub, waiting for the load or request failure that carries the same exception. */
interface PendingPython {
  readonly time: number;
  readonly kind: 'load' | 'request';
  readonly error: PythonError;
  readonly instanceName?: string;
  readonly source?: string;
  readonly lines: number;
}

type MutableEvent = { -readonly [K in keyof LogEvent]: LogEvent[K] };

interface StreamState {
  readonly stream: string;
  readonly instance: string;
  open?: OpenMessage;
  lastTime: number;
  readonly targetByHash: Map<string, string>;
  pendingHash?: { readonly hash: string; readonly time: number };
  lastRequested?: { readonly target: string; readonly time: number; hashed: boolean };
  /** TargetModels SageMaker asked to load and that have not succeeded or failed yet. */
  readonly requested: Map<string, number>;
  /** Triton models loading (model ids as printed). */
  readonly loading: Set<string>;
  held: HeldLine[];
  pending: PendingPython[];
  readonly lastFailureOf: Map<string, number>;
  readonly recentInvokes: { target: string; time: number }[];
  /** A shutdown was reported and no server start came since. */
  stopping: boolean;
}

export class EndpointLogParser {
  private readonly streams = new Map<string, StreamState>();
  /** TargetModel names the SageMaker front end announced, on any instance. */
  private readonly targets = new Set<string>();
  private events: MutableEvent[] = [];
  private readonly year: number;

  constructor(options: ParserOptions = {}) {
    this.year = options.year ?? new Date().getUTCFullYear();
  }

  /** Feeds one line; lines of one stream must come in order, streams may interleave. */
  push(record: LogRecord): void {
    const st = this.state(record.stream);
    const text = record.message;
    const line = parseTritonLine(text, this.year);
    const time = record.timestamp ?? line?.timestamp ?? st.lastTime;
    st.lastTime = time;
    if (line) {
      this.close(st);
      st.open = { time, line, extra: [], traceback: false };
      return;
    }
    const raw = classifyRawLine(text);
    if (raw) {
      this.close(st);
      this.apply(st, raw, { time, text, lines: 1 });
      return;
    }
    if (text.startsWith('Traceback (most recent call last):')) {
      this.close(st);
      st.open = { time, extra: [text], traceback: true };
      return;
    }
    const open = st.open;
    if (open?.traceback) {
      open.extra.push(text);
      // The exception line, unindented, ends the traceback.
      if (text.length > 0 && !/^\s/.test(text)) this.close(st);
      return;
    }
    if (open?.line && !open.line.escaped) {
      open.extra.push(text);
      return;
    }
    // Output of the model's own code or of a tool in the image: reported only when it says it is an error.
    if (/\b(error|exception|fatal|failed)\b/i.test(text)) this.unknown(st, { time, level: 'error', text });
  }

  /** The events completed so far, oldest first; each is returned once. */
  drain(options: DrainOptions = {}): LogEvent[] {
    const active = options.activeStreams ? new Set(options.activeStreams) : undefined;
    for (const st of this.streams.values()) {
      if (options.final || (active && !active.has(st.stream))) this.close(st);
      const expired = (p: PendingPython) => options.final || (options.now !== undefined && options.now - p.time > JOIN_WINDOW_MS);
      for (const p of st.pending.filter(expired)) this.reportPython(st, p);
      st.pending = st.pending.filter((p) => !expired(p));
      if (options.final) this.release(st);
      else if (options.now !== undefined) this.release(st, options.now - JOIN_WINDOW_MS);
    }
    for (const e of this.events) {
      if (!e.targetModel && e.hash) {
        const target = this.streams.get(e.stream)?.targetByHash.get(e.hash);
        if (target) e.targetModel = target;
      }
    }
    const out = this.events.sort((a, b) => a.time.getTime() - b.time.getTime());
    this.events = [];
    return out;
  }

  // ---- one message ----

  private close(st: StreamState): void {
    const open = st.open;
    if (!open) return;
    st.open = undefined;
    if (open.traceback) {
      const text = open.extra.join('\n');
      const error = splitPythonError(text);
      if (error) this.reportPython(st, { time: open.time, kind: 'load', error, lines: open.extra.length });
      return;
    }
    const line = open.line!;
    const full = open.extra.length > 0 ? `${line.message}\n${open.extra.join('\n')}` : line.message;
    let fact = classifyMessage(full);
    let lines = 1 + open.extra.length;
    if (fact.t === 'other' && open.extra.length > 0) {
      // Unprefixed lines after a one-line message are someone else's output, not its continuation.
      fact = classifyMessage(line.message);
      lines = 1;
    }
    const message = { time: open.time, text: lines > 1 ? full : line.message, source: line.source, lines };
    if (fact.t === 'other') {
      if (line.level !== 'info') this.unknown(st, { time: open.time, level: line.level, text: message.text, source: line.source });
      return;
    }
    this.apply(st, fact, message);
  }

  private apply(st: StreamState, fact: Fact, msg: { time: number; text: string; source?: string; lines: number }): void {
    const base = { time: msg.time, source: msg.source, lines: msg.lines };
    switch (fact.t) {
      case 'server-started':
        // A new container: what the old one had loaded is gone.
        this.release(st);
        st.targetByHash.clear();
        st.requested.clear();
        st.loading.clear();
        st.stopping = false;
        this.add(st, 'server-started', { ...base, message: msg.text });
        return;
      case 'server-stopping':
        // The signal (triton_signal.cc) and the core (server.cc:312) both announce one shutdown.
        if (st.stopping) return;
        st.stopping = true;
        this.add(st, 'server-stopping', { ...base, message: msg.text });
        return;
      case 'server-failed':
        this.add(st, 'error', { ...base, message: fact.reason, failure: knownFailure(fact.reason, this.takeHeld(st).map((h) => h.text)) });
        return;
      case 'load-hash':
        st.pendingHash = { hash: fact.hash, time: msg.time };
        return;
      case 'load-requested': {
        this.targets.add(fact.target);
        let hash: string | undefined;
        if (st.pendingHash && msg.time - st.pendingHash.time <= PAIRING_WINDOW_MS) {
          hash = st.pendingHash.hash;
          st.targetByHash.set(hash, fact.target);
        }
        st.pendingHash = undefined;
        st.requested.set(fact.target, msg.time);
        st.lastRequested = { target: fact.target, time: msg.time, hashed: hash !== undefined };
        this.add(st, 'load-started', { ...base, message: msg.text, targetModel: fact.target, tritonModel: fact.target, hash });
        return;
      }
      case 'repository-registered': {
        const hash = hashOfRepository(fact.repository);
        const last = st.lastRequested;
        if (hash && last && !last.hashed && msg.time - last.time <= PAIRING_WINDOW_MS && !st.targetByHash.has(hash)) {
          st.targetByHash.set(hash, last.target);
          last.hashed = true;
        }
        return;
      }
      case 'load-started': {
        st.loading.add(key(fact.model));
        // SageMaker's request already opened the TargetModel's load.
        if (st.requested.has(fact.model.name)) return;
        this.add(st, 'load-started', { ...base, message: msg.text, ...this.resolve(st, fact.model, true), version: fact.version });
        return;
      }
      case 'load-succeeded': {
        st.loading.delete(key(fact.model));
        const who = this.resolve(st, fact.model, true);
        st.requested.delete(fact.model.name);
        this.add(st, 'load-succeeded', { ...base, message: msg.text, ...who });
        if (!this.loadInFlight(st)) this.release(st);
        return;
      }
      case 'load-failed':
        this.loadFailed(st, fact.model, fact.version, fact.reason, base, msg.text);
        return;
      case 'ensemble-failed': {
        const who = this.resolve(st, fact.model, true);
        st.lastFailureOf.set(key(fact.model), msg.time);
        st.requested.delete(fact.model.name);
        st.loading.delete(key(fact.model));
        // The composing model's traceback belongs to its own failure, reported beside this one.
        this.add(st, 'load-failed', {
          ...base,
          message: beforeTraceback(msg.text),
          ...who,
          failure: ensembleDependencyFailure(fact.dependency.name),
        });
        if (!this.loadInFlight(st)) this.release(st);
        return;
      }
      case 'eviction':
        this.targets.add(fact.target);
        st.requested.delete(fact.target);
        this.add(st, 'eviction', {
          ...base,
          message: msg.text,
          targetModel: fact.target,
          tritonModel: fact.target,
          hash: this.hashOfTarget(st, fact.target),
        });
        return;
      case 'unloaded':
        this.add(st, 'unloaded', { ...base, message: msg.text, ...this.resolve(st, fact.model, false), version: fact.version });
        return;
      case 'unload-failed':
        this.add(st, 'unload-failed', {
          ...base,
          message: msg.text,
          ...(fact.target ? { targetModel: fact.target, tritonModel: fact.target } : {}),
          failure: knownFailure(fact.reason),
        });
        return;
      case 'invoking': {
        this.targets.add(fact.target);
        st.recentInvokes.push({ target: fact.target, time: msg.time });
        if (st.recentInvokes.length > 8) st.recentInvokes.shift();
        return;
      }
      case 'invoke-failed':
        this.invokeFailed(st, fact.reason, base);
        return;
      case 'python-init-failed':
      case 'python-execute-failed': {
        const error = splitPythonError(fact.reason) ?? { exception: fact.reason.split('\n')[0]!, frames: [] };
        st.pending.push({
          time: msg.time,
          kind: fact.t === 'python-init-failed' ? 'load' : 'request',
          error,
          ...(fact.t === 'python-execute-failed' ? { instanceName: fact.instance } : {}),
          ...(msg.source ? { source: msg.source } : {}),
          lines: msg.lines,
        });
        return;
      }
      case 'execution-env':
      case 'other':
        return;
    }
  }

  private loadFailed(
    st: StreamState,
    model: ModelId,
    version: number | undefined,
    reason: string | undefined,
    base: { time: number; source?: string; lines: number },
    text: string,
  ): void {
    const k = key(model);
    st.loading.delete(k);
    st.requested.delete(model.name);
    if (reason === undefined) {
      // lifecycle:789 repeats lifecycle:654 without the reason.
      const last = st.lastFailureOf.get(k);
      if (last !== undefined && base.time - last <= 60_000) return;
    }
    st.lastFailureOf.set(k, base.time);
    const context = this.takeHeld(st);
    const joined = reason !== undefined ? this.joinPython(st, 'load', reason) : undefined;
    const python = (reason !== undefined ? splitPythonError(reason) : undefined) ?? joined?.error;
    const who = this.resolve(st, model, true, python);
    const message = reason !== undefined ? (python ? beforeTraceback(reason) : reason) : text;
    this.add(st, 'load-failed', {
      ...withJoined(base, joined),
      message,
      ...who,
      ...(version !== undefined ? { version } : {}),
      failure: knownFailure(withFrames(reason ?? text, python), context.map((h) => h.text)),
      ...tracebackOf(python),
      ...(context.length > 0 ? { context: context.map((h) => h.text) } : {}),
    });
    if (!this.loadInFlight(st)) this.release(st);
  }

  private invokeFailed(st: StreamState, reason: string, base: { time: number; source?: string; lines: number }): void {
    const joined = this.joinPython(st, 'request', reason);
    const python = splitPythonError(reason) ?? joined?.error;
    const instanceModel = joined?.instanceName?.replace(/_\d+_\d+$/, '');
    const model = instanceModel ? { name: instanceModel } : undefined;
    let who = this.resolve(st, model, false, python);
    if (!who.targetModel) {
      // The request's TargetModel, when every request in the last 2 s on this instance went to the same one.
      const recent = st.recentInvokes.filter((i) => base.time - i.time <= 2000);
      const names = new Set(recent.map((i) => i.target));
      if (names.size === 1) who = { ...who, targetModel: [...names][0]! };
    }
    const message = python ? beforeTraceback(reason) : reason;
    this.add(st, 'invoke-failed', {
      ...withJoined(base, joined),
      message,
      ...who,
      failure: knownFailure(withFrames(reason, python)),
      ...tracebackOf(python),
    });
  }

  /** Removes and returns the stub's python error that `reason` repeats, if one is waiting. */
  private joinPython(st: StreamState, kind: PendingPython['kind'], reason: string): PendingPython | undefined {
    const i = st.pending.findIndex((p) => p.kind === kind && p.error.exception.length > 0 && reason.includes(p.error.exception));
    if (i < 0) return undefined;
    return st.pending.splice(i, 1)[0];
  }

  private reportPython(st: StreamState, p: PendingPython): void {
    const where = p.error.frames.map((f) => archivePathOf(f)).find((a) => a !== undefined);
    const name = p.instanceName?.replace(/_\d+_\d+$/, '') ?? where?.modelDir;
    const who = this.resolve(st, name ? { name } : undefined, p.kind === 'load', p.error);
    this.add(st, p.kind === 'request' ? 'invoke-failed' : 'python-error', {
      time: p.time,
      lines: p.lines,
      ...(p.source ? { source: p.source } : {}),
      message: p.error.exception,
      ...who,
      failure: knownFailure(withFrames(p.error.exception, p.error)),
      ...tracebackOf(p.error),
    });
  }

  /** An error or warning line the catalogue does not know: kept to explain a failing load, else reported as it is. */
  private unknown(st: StreamState, held: HeldLine, mayHold = true): void {
    if (mayHold && this.loadInFlight(st)) {
      st.held.push(held);
      return;
    }
    this.add(st, held.level === 'warning' ? 'warning' : 'error', {
      time: held.time,
      lines: held.text.split('\n').length,
      message: held.text,
      ...(held.source ? { source: held.source } : {}),
      ...(held.level !== 'warning' ? { failure: knownFailure(held.text) } : {}),
    });
  }

  private takeHeld(st: StreamState): HeldLine[] {
    const held = st.held;
    st.held = [];
    return held;
  }

  /** Reports held lines (all, or those older than `before`) on their own: no failure came for them to explain. */
  private release(st: StreamState, before?: number): void {
    const keep = before === undefined ? [] : st.held.filter((h) => h.time >= before);
    const out = before === undefined ? st.held : st.held.filter((h) => h.time < before);
    st.held = keep;
    for (const h of out) this.unknown(st, h, false);
  }

  private loadInFlight(st: StreamState): boolean {
    return st.requested.size > 0 || st.loading.size > 0;
  }

  // ---- which TargetModel ----

  /** The TargetModel, Triton model and hash an event concerns, from what the log said so far. */
  private resolve(
    st: StreamState,
    model: ModelId | undefined,
    loading: boolean,
    python?: PythonError,
  ): { targetModel?: string; tritonModel?: string; hash?: string } {
    const fromFrames = python?.frames.map((f) => archivePathOf(f)).find((a) => a !== undefined);
    const name = model?.name ?? fromFrames?.modelDir;
    const hash = hashOfRepository(model?.namespace) ?? fromFrames?.hash;
    let target: string | undefined;
    if (name !== undefined && this.targets.has(name)) {
      target = name;
      if (hash && !st.targetByHash.has(hash)) st.targetByHash.set(hash, name);
    } else if (hash !== undefined) {
      target = st.targetByHash.get(hash);
    }
    if (target === undefined && loading && st.requested.size === 1) {
      // The one TargetModel loading on this instance.
      target = [...st.requested.keys()][0]!;
      if (hash) st.targetByHash.set(hash, target);
    }
    return {
      ...(target !== undefined ? { targetModel: target } : {}),
      ...(name !== undefined ? { tritonModel: name } : fromFrames && target ? { tritonModel: target } : {}),
      ...(hash !== undefined ? { hash } : {}),
    };
  }

  private hashOfTarget(st: StreamState, target: string): string | undefined {
    for (const [hash, t] of st.targetByHash) if (t === target) return hash;
    return undefined;
  }

  private add(
    st: StreamState,
    kind: LogEventKind,
    fields: { time: number; message: string; lines: number; source?: string | undefined; failure?: KnownFailure | undefined } & Partial<
      Pick<LogEvent, 'targetModel' | 'tritonModel' | 'version' | 'hash' | 'traceback' | 'context'>
    >,
  ): void {
    // Fields in the order a reader of `--json` wants them: what, when, where, which model, then the details.
    const e = { kind, time: new Date(fields.time), instance: st.instance, stream: st.stream } as MutableEvent;
    if (fields.targetModel !== undefined) e.targetModel = fields.targetModel;
    if (fields.tritonModel !== undefined) e.tritonModel = fields.tritonModel;
    if (fields.version !== undefined) e.version = fields.version;
    if (fields.hash !== undefined) e.hash = fields.hash;
    e.message = fields.message;
    if (fields.failure !== undefined && FAILURE_KINDS.has(kind)) e.failure = fields.failure;
    if (fields.traceback !== undefined) e.traceback = fields.traceback;
    if (fields.context !== undefined) e.context = fields.context;
    if (fields.source !== undefined) e.source = fields.source;
    e.lines = fields.lines;
    this.events.push(e);
  }

  private state(stream: string): StreamState {
    let st = this.streams.get(stream);
    if (!st) {
      st = {
        stream,
        instance: instanceOfStream(stream),
        lastTime: 0,
        targetByHash: new Map(),
        requested: new Map(),
        loading: new Set(),
        held: [],
        pending: [],
        lastFailureOf: new Map(),
        recentInvokes: [],
        stopping: false,
      };
      this.streams.set(stream, st);
    }
    return st;
  }
}

/** Every event in `records` (all streams), oldest first. */
export function parseEndpointLog(records: Iterable<LogRecord>, options: ParserOptions = {}): LogEvent[] {
  const parser = new EndpointLogParser(options);
  for (const record of records) parser.push(record);
  return parser.drain({ final: true });
}

/** `/opt/ml/models/<hash>/model` or `/opt/ml/models/<hash>` (archive root is the model) -> `<hash>`. */
function hashOfRepository(repository: string | undefined): string | undefined {
  if (!repository) return undefined;
  return /^\/opt\/ml\/models\/([^/]+)(?:\/model)?\/?$/.exec(repository)?.[1];
}

function key(model: ModelId): string {
  return model.namespace ? `${model.namespace}::${model.name}` : model.name;
}

/** A failure's lines and time: its own, and those of the stub's python error joined to it (the earlier line first). */
function withJoined<T extends { time: number; lines: number }>(base: T, joined: PendingPython | undefined): T {
  return joined ? { ...base, time: Math.min(base.time, joined.time), lines: base.lines + joined.lines } : base;
}

function tracebackOf(python: PythonError | undefined): { traceback?: readonly string[] } {
  return python && python.frames.length > 0 ? { traceback: python.frames } : {};
}

/** `reason`, with the python frames joined from the stub when the reason itself carries none (for the failure rules). */
function withFrames(reason: string, python: PythonError | undefined): string {
  if (!python || python.frames.length === 0 || splitPythonError(reason)) return reason;
  return `${reason}\n\nAt:\n${python.frames.join('\n')}`;
}

/** The part of a reason before its python frames: `Internal: ModuleNotFoundError: No module named 'x'`. */
function beforeTraceback(reason: string): string {
  const m = /\n\s*At:\n|\nTraceback \(most recent call last\):/.exec(reason);
  return (m ? reason.slice(0, m.index) : reason).trim();
}
