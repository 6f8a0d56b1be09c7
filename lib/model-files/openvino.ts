// Reads what Triton's OpenVINO backend learns from an IR's model.xml at load, without OpenVINO: the Parameter layers
// (the model's inputs) and the Result layers (its outputs), each with the tensor names, element type, shape and layout
// OpenVINO gives them. The weights are in model.bin, which is never opened; the XML is searched, not parsed (below).
// IR format: openvinotoolkit/openvino docs "OpenVINO IR format" (net > layers > layer > data, rt_info, input/output >
// port > dim; edges > edge). lib/repository/openvino-rules.ts applies the backend.

import type { ByteSource } from './protobuf-wire';

export interface OpenVinoTensor {
  /** The layer's name attribute (its friendly name). */
  readonly layer: string;
  /** The tensor names of the port (the `names` attribute), as OpenVINO splits them. */
  readonly names: readonly string[];
  /** What ov::Output::get_any_name() returns: the smallest of the names (openvino src/core/src/descriptor/tensor.cpp). */
  readonly anyName?: string;
  /** The port's precision (FP32, I64, ...), upper case. */
  readonly precision: string;
  /** Dimensions, -1 for a dynamic one; undefined for a dynamic rank. */
  readonly dims?: readonly number[];
  /** The layout from rt_info (e.g. `[N,C,H,W]`), when given. */
  readonly layout?: string;
}

export interface OpenVinoModelSummary {
  readonly version: number;
  readonly inputs: readonly OpenVinoTensor[];
  readonly outputs: readonly OpenVinoTensor[];
}

export type OpenVinoReadResult =
  | { readonly ok: true; readonly model: OpenVinoModelSummary }
  | { readonly ok: false; readonly reason: string };


// A name follows a space (the tag's name before it, or its attribute text starts with one): matched anywhere, a long
// run of name characters would be tried from each of its characters. exec in a loop, not matchAll: several times faster.
const ATTRIBUTE = /\s([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  ATTRIBUTE.lastIndex = 0;
  for (let m = ATTRIBUTE.exec(tag); m !== null; m = ATTRIBUTE.exec(tag)) out.set(m[1]!, unescapeXml(m[2] ?? m[3] ?? ''));
  return out;
}

function unescapeXml(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_all, e: string) => {
    switch (e) {
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'amp':
        return '&';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
      default:
        return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    }
  });
}

/** Tensor names as the IR reader splits them: on commas, `\,` standing for a comma inside a name. */
function splitNames(value: string): string[] {
  const names: string[] = [];
  let current = '';
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\' && value[i + 1] === ',') {
      current += ',';
      i++;
    } else if (value[i] === ',') {
      names.push(current.trim());
      current = '';
    } else current += value[i];
  }
  names.push(current.trim());
  return names.filter((n) => n !== '');
}

interface Port {
  readonly id: string;
  readonly precision: string;
  readonly names: string[];
  readonly dims: number[];
}

/** The offset of the `>` that ends the tag starting at `lt` in `text` (a quoted value may hold `>`), -1 if none. */
function endOfTag(text: string, lt: number): number {
  let quote = '';
  for (let i = lt; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '>') return i;
    else if (c === '"' || c === "'") quote = c;
  }
  return -1;
}

/** The attribute text (what follows the name) of each `<name ...>` start tag in `text`, in order. */
function* startTags(text: string, name: string): Generator<{ attrs: string; end: number; selfClosing: boolean }> {
  for (let at = text.indexOf(`<${name}`); at >= 0; at = text.indexOf(`<${name}`, at + 1)) {
    if (!/[\s/>]/.test(text[at + name.length + 1] ?? '')) continue;
    const gt = endOfTag(text, at);
    if (gt < 0) return;
    const selfClosing = text[gt - 1] === '/';
    yield { attrs: text.slice(at + name.length + 1, selfClosing ? gt - 1 : gt), end: gt + 1, selfClosing };
    at = gt;
  }
}

/** The ports of one `<input>` or `<output>` section of a layer. */
function ports(section: string | undefined): Port[] {
  if (!section) return [];
  const out: Port[] = [];
  // Searched with indexOf, not a regular expression: a layer that opens ports and never closes them stays linear.
  for (const tag of startTags(section, 'port')) {
    const close = tag.selfClosing ? tag.end : section.indexOf('</port>', tag.end);
    if (close < 0) break;
    const attrs = attributes(tag.attrs);
    // A bounded dimension (`1..10`) or `?` is dynamic: -1, which the backend's doesMatch never refuses.
    const inner = section.slice(tag.end, close);
    const dims = [...inner.matchAll(/<dim>([^<]*)<\/dim>/g)].map((d) => (/^\s*\d+\s*$/.test(d[1]!) ? Number(d[1]) : -1));
    const precision = (attrs.get('precision') ?? '').toUpperCase();
    out.push({ id: attrs.get('id') ?? '', precision, names: splitNames(attrs.get('names') ?? ''), dims });
  }
  return out;
}

interface Layer {
  /** Byte offset of its start tag. */
  readonly at: number;
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly body: string;
}

function section(body: string, tag: 'input' | 'output'): string | undefined {
  const open = body.indexOf(`<${tag}>`);
  if (open < 0) return undefined;
  const close = body.indexOf(`</${tag}>`, open);
  return close < 0 ? undefined : body.slice(open + tag.length + 2, close);
}

function layout(body: string): string | undefined {
  for (const tag of startTags(body, 'attribute')) {
    const attrs = attributes(tag.attrs);
    if (attrs.get('name') === 'layout') return attrs.get('layout') ?? attrs.get('value');
  }
  return undefined;
}

/** The attributes of a layer's `<data>`. */
function dataOf(body: string): Map<string, string> | undefined {
  const data = startTags(body, 'data').next();
  return data.done ? undefined : attributes(data.value.attrs);
}

function shapeOf(body: string, port: Port | undefined): number[] | undefined {
  // A dynamic rank is written as shape="..." on a Parameter; ports then have no dims.
  if (dataOf(body)?.get('shape') === '...') return undefined;
  return port?.dims ?? [];
}

function tensor(layer: Layer, port: Port | undefined, precision: string, dims: number[] | undefined): OpenVinoTensor {
  const names = port?.names ?? [];
  const anyName = names.length ? names.reduce((a, b) => (b < a ? b : a)) : undefined;
  const lay = layout(layer.body);
  return {
    layer: layer.name,
    names,
    ...(anyName ? { anyName } : {}),
    precision,
    ...(dims ? { dims } : {}),
    ...(lay ? { layout: lay } : {}),
  };
}


/** Reads model.xml from an open file. Never throws for what the file holds. */
export function readOpenVinoModel(source: ByteSource): OpenVinoReadResult {
  if (source.size === 0) return { ok: false, reason: 'is empty' };
  try {
    return readIr(new IrFile(source));
  } catch (err) {
    if (err instanceof NotIr) return notIr(err.message);
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

// A big IR has hundreds of thousands of layers, and the backend needs only its Parameters and Results. So the file is
// not parsed: one pass searches it, a chunk at a time, for the few words that mark what is needed (`Parameter`,
// `Result`, sub-graph `body>` tags) with Buffer.indexOf, which runs natively; only the tags around those hits and the
// few layers they name are decoded. The lookups search for the form OpenVINO's serializer writes (`<layer id="7"`,
// `to-layer="7"`) and fall back to an index of the region read as text when a hand-written IR spells it otherwise.
// Measured on an IR of 20,000 layers (4.3 MiB, bench/model-files.js): regular expressions over the whole text took
// 40 ms; this search takes about as long as reading the file (the buffers are reused: a fresh 256 KiB buffer per read
// cost more than the search, in page faults).
// Hostile files stay linear: a tag is looked for at most MAX_TAG bytes on, each byte is searched back over once per
// word, and once the lookups one Result at a time have searched twice the file, one index serves the rest.

/** Bytes read per step: a chunk stays in the CPU's cache while each needle is searched for in it. */
const CHUNK = 256 * 1024;
/** Bytes read past a chunk's end, so a word that straddles two chunks is found in the first. */
const OVERLAP = 64;
/** The longest start tag (or layer) taken for an IR's: a layer's start tag holds an id, a name, a type and a version. */
const MAX_TAG = 1024 * 1024;
/** How far back from a hit its tag's `<` is looked for when no earlier hit bounds the search (an edge tag is short). */
const TAG_REACH = 64 * 1024;
/** Bytes read first when following a tag or a layer to its end (most are shorter), and per step after. */
const FIRST_STEP = 1024;
const STEP = 16 * 1024;
const LT = 0x3c;
const GT = 0x3e;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const COMMENT = Buffer.from('<!--');
const COMMENT_END = Buffer.from('-->');
const NOTHING = Buffer.alloc(0);

// Read buffers, kept from one read to the next: each serves one purpose, so no read overwrites a view still in use.
type Slot = 'scan' | 'back' | 'tag' | 'text';
const buffers = new Map<Slot, Buffer>();
function buffer(slot: Slot, size: number): Buffer {
  const kept = buffers.get(slot);
  if (kept && kept.length >= size) return kept;
  // A rare bigger read (a layer of hundreds of KiB) gets a buffer of its own, not kept.
  if (size > CHUNK + OVERLAP) return Buffer.allocUnsafe(size);
  const buf = Buffer.allocUnsafe(CHUNK + OVERLAP);
  buffers.set(slot, buf);
  return buf;
}

interface Tag {
  /** Byte offset of its `<`. */
  readonly start: number;
  /** Byte offset just after its `>` (its start when incomplete). */
  readonly end: number;
  /** From `<` to `>`, both included; for an incomplete tag, its first bytes. */
  readonly text: string;
  /** False when the file ends inside it, or it runs on for more than MAX_TAG bytes. */
  readonly complete: boolean;
}

interface Needle {
  readonly bytes: Buffer;
  active: boolean;
}

/** The tag a hit lies in (undefined: none) and where the search for the next hit of that needle resumes. */
interface Resolved {
  readonly tag: Tag | undefined;
  readonly resume: number;
}

/** Thrown for a file that cannot be an IR, when the search finds out; readOpenVinoModel gives its message as the reason. */
class NotIr extends Error {}

class IrFile {
  readonly size: number;
  /** Bytes searched by the lookups made one Result at a time (see `overBudget`). */
  searched = 0;

  constructor(private readonly source: ByteSource) {
    this.size = source.size;
  }

  /** Bytes [start, end) in the read buffer `slot`, valid until the next read into that slot. */
  view(slot: Slot, start: number, end: number): Buffer {
    const from = Math.max(0, start);
    const length = Math.max(0, Math.min(this.size, end) - from);
    const buf = buffer(slot, length);
    return buf.subarray(0, this.readInto(buf, length, from));
  }

  text(start: number, end: number): string {
    return this.view('text', start, end).toString('utf8');
  }

  private readInto(buf: Buffer, length: number, position: number): number {
    let done = 0;
    while (done < length) {
      const n = this.source.read(done === 0 ? buf : buf.subarray(done), length - done, position + done);
      if (n <= 0) break;
      done += n;
    }
    return done;
  }

  /** Whether the lookups one Result at a time have searched more than twice the file: then an index is cheaper. */
  get overBudget(): boolean {
    return this.searched > 2 * this.size;
  }

  /**
   * Calls `onHit` with each place an active needle occurs in [from, to) and the tag it lies in, if any; each tag once
   * per needle. Hits come per chunk, needle by needle, not in file order.
   */
  scan(needles: readonly Needle[], from: number, to: number, onHit: (which: number, at: number, tag: Tag | undefined) => void) {
    const buf = buffer('scan', CHUNK + OVERLAP);
    // Per needle: where its search resumes (after the last tag it hit), and the offset from which the file up to its
    // next hit is known to lie outside any tag, which bounds the search back for that hit's `<`.
    const resume = needles.map(() => from);
    const floor = needles.map(() => from);
    for (let pos = from; pos < to; pos += CHUNK) {
      const view = buf.subarray(0, this.readInto(buf, Math.min(CHUNK + OVERLAP, to - pos), pos));
      const limit = Math.min(CHUNK, view.length);
      for (let w = 0; w < needles.length; w++) {
        const needle = needles[w]!;
        if (!needle.active) continue;
        let i = view.indexOf(needle.bytes, Math.max(0, resume[w]! - pos));
        while (needle.active && i >= 0 && i < limit) {
          const found = this.resolve(pos + i, floor[w]!, view, pos);
          resume[w] = floor[w] = found.resume;
          onHit(w, pos + i, found.tag);
          i = resume[w]! - pos < view.length ? view.indexOf(needle.bytes, resume[w]! - pos) : -1;
        }
      }
    }
  }

  /** The tag around `at`, knowing that the file from `floor` to `at` holds no tag's start but for a `<` in it. */
  private resolve(at: number, floor: number, view: Buffer, viewAt: number): Resolved {
    const lt = this.lastLt(at, floor, view, viewAt);
    const end = lt < 0 ? -1 : this.tagEnd(lt, view, viewAt);
    if (lt >= 0 && end < 0) return { tag: this.incomplete(lt), resume: Math.max(at + 1, lt + MAX_TAG) };
    if (lt < 0 || end < at) {
      // Outside any tag: so is every later hit before the next `<`, where the search resumes.
      const i = at >= viewAt && at < viewAt + view.length ? view.indexOf(LT, at - viewAt) : -2;
      return { tag: undefined, resume: i === -2 ? at + 1 : i < 0 ? viewAt + view.length : viewAt + i };
    }
    return { tag: { start: lt, end: end + 1, text: this.text(lt, end + 1), complete: true }, resume: end + 1 };
  }

  /** The tag whose `<` is at `lt`. */
  tagAt(lt: number): Tag | undefined {
    const end = this.tagEnd(lt, NOTHING, 0);
    return end < 0 ? this.incomplete(lt) : { start: lt, end: end + 1, text: this.text(lt, end + 1), complete: true };
  }

  /** The tag around `at`, its `<` looked for at most TAG_REACH bytes back. */
  tagAround(at: number): Tag | undefined {
    return this.resolve(at, Math.max(0, at - TAG_REACH), NOTHING, 0).tag;
  }

  private incomplete(lt: number): Tag {
    return { start: lt, end: lt, text: this.text(lt, lt + 256), complete: false };
  }

  /** The offset of the last `<` in [floor, at], -1 when there is none. */
  private lastLt(at: number, floor: number, view: Buffer, viewAt: number): number {
    if (at >= viewAt && at < viewAt + view.length) {
      const lo = Math.max(floor, viewAt) - viewAt;
      const i = view.subarray(lo, at - viewAt + 1).lastIndexOf(LT);
      if (i >= 0 || floor >= viewAt) return i < 0 ? -1 : viewAt + lo + i;
      at = viewAt - 1;
    }
    for (let end = at + 1; end > floor; end -= CHUNK) {
      const from = Math.max(floor, end - CHUNK);
      const i = this.view('back', from, end).lastIndexOf(LT);
      if (i >= 0) return from + i;
    }
    return -1;
  }

  /** The offset of the `>` that ends the tag whose `<` is at `lt` (a quoted value may hold `>`); -1 if none in MAX_TAG. */
  private tagEnd(lt: number, view: Buffer, viewAt: number): number {
    const limit = Math.min(this.size, lt + MAX_TAG);
    let buf = view;
    let bufAt = viewAt;
    if (lt < bufAt || lt + COMMENT.length > bufAt + buf.length) {
      buf = this.view('tag', lt, lt + FIRST_STEP);
      bufAt = lt;
    }
    if (buf.subarray(lt - bufAt, lt - bufAt + COMMENT.length).equals(COMMENT)) {
      // A comment may hold quotes and `<`: it ends at `-->`.
      const end = this.find(COMMENT_END, lt + COMMENT.length, limit);
      return end < 0 ? -1 : end + COMMENT_END.length - 1;
    }
    // Quotes and `>` are found with indexOf (natively), each searched for again only once passed: linear in the tag.
    let quote = 0;
    for (let p = lt; p < limit; ) {
      if (p < bufAt || p >= bufAt + buf.length) {
        buf = this.view('tag', p, p + STEP);
        bufAt = p;
        if (buf.length === 0) break;
      }
      const block = buf.subarray(0, Math.min(buf.length, limit - bufAt));
      let k = p - bufAt;
      let gt = -2;
      let dq = -2;
      let sq = -2;
      while (k < block.length) {
        if (quote !== 0) {
          const close = block.indexOf(quote, k);
          if (close < 0) break;
          quote = 0;
          k = close + 1;
          continue;
        }
        if (gt !== -1 && gt < k) gt = block.indexOf(GT, k);
        if (dq !== -1 && dq < k) dq = block.indexOf(QUOTE, k);
        if (sq !== -1 && sq < k) sq = block.indexOf(APOSTROPHE, k);
        const q = dq < 0 ? sq : sq < 0 ? dq : Math.min(dq, sq);
        if (gt >= 0 && (q < 0 || gt < q)) return bufAt + gt;
        if (q < 0) break;
        quote = block[q]!;
        k = q + 1;
      }
      p = bufAt + block.length;
    }
    return -1;
  }

  /** The offset of the first `needle` in [from, to), -1 when there is none. */
  find(needle: Buffer, from: number, to: number): number {
    for (let pos = from; pos < to; pos += STEP * 4) {
      const view = this.view('tag', pos, Math.min(to, pos + STEP * 4 + needle.length - 1));
      const i = view.indexOf(needle);
      if (i >= 0) return pos + i;
    }
    return -1;
  }

  /**
   * The text of a Parameter's or Result's layer from its start tag to its `</layer>`. Such a layer holds no other, so
   * a `<layer` ends it too (when `</layer>` is missing); a layer of more than MAX_TAG bytes is not an IR's.
   */
  element(tag: Tag): string {
    if (tag.text.endsWith('/>')) return tag.text;
    const from = tag.end;
    for (let reach = FIRST_STEP; ; reach *= 4) {
      const end = Math.min(this.size, tag.start + Math.min(reach, MAX_TAG));
      const view = this.view('text', from, end);
      const close = view.indexOf('</layer>');
      const next = view.indexOf('<layer');
      const stop = close < 0 ? next : next < 0 ? close : Math.min(close, next);
      if (stop >= 0) return tag.text + view.toString('utf8', 0, stop);
      if (end >= this.size) return tag.text + view.toString('utf8');
      if (reach >= MAX_TAG) throw new NotIr(`its layer at byte ${tag.start} runs on for more than 1 MiB without </layer>`);
    }
  }
}

const isElement = (tag: Tag | undefined, name: string): tag is Tag =>
  tag !== undefined && tag.text.startsWith(`<${name}`) && /[\s/>]/.test(tag.text[name.length + 1] ?? '');

const notIr = (why: string): OpenVinoReadResult => ({ ok: false, reason: `is not an OpenVINO IR: ${why}` });

/** Fails the read for an element's start tag that never ends: OpenVINO's XML parser refuses such a file. */
function complete(tag: Tag, name: string): void {
  if (tag.complete) return;
  throw new NotIr(`its <${name}> tag at byte ${tag.start} does not end (no ">" within 1 MiB)`);
}

/** Nesting of the sub-graphs (TensorIterator, Loop, If bodies) by offset: their Parameters and Results are not the model's. */
class Bodies {
  private readonly marks: { at: number; depth: number }[] = [];

  constructor(tags: readonly Tag[]) {
    let depth = 0;
    for (const tag of [...tags].sort((a, b) => a.start - b.start)) {
      depth += tag.text.startsWith('</') ? -1 : 1;
      this.marks.push({ at: tag.start, depth });
    }
  }

  /** Whether `at` is inside a sub-graph body. */
  nested(at: number): boolean {
    let lo = 0;
    let hi = this.marks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.marks[mid]!.at <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 && this.marks[lo - 1]!.depth > 0;
  }
}

function readIr(file: IrFile): OpenVinoReadResult {
  const head = file.text(0, 1024).replace(/^\uFEFF/, '').trimStart();
  if (!head.startsWith('<')) return notIr('it is not XML');
  // 'Param' rather than 'Parameter': Buffer.indexOf finds a needle of fewer than 7 bytes by memchr on its first
  // byte, far faster than its Boyer-Moore-Horspool for longer ones when that byte is rare, as P, R and b are in an IR.
  const needles: Needle[] = ['<net', '<layer', 'body>', 'Param', 'Result'].map((w) => ({ bytes: Buffer.from(w), active: true }));
  let net: Tag | undefined;
  let firstLayer: Tag | undefined;
  const bodyTags: Tag[] = [];
  const candidates = new Map<number, Tag>();
  file.scan(needles, 0, file.size, (which, _at, tag) => {
    if (which === 0 && isElement(tag, 'net')) {
      net = tag;
      needles[0]!.active = false;
    } else if (which === 1 && isElement(tag, 'layer')) {
      firstLayer = tag;
      needles[1]!.active = false;
    } else if (which === 2 && tag?.complete && /^<\/?\w*body>$/.test(tag.text)) bodyTags.push(tag);
    else if (which >= 3 && isElement(tag, 'layer') && attributes(tag.text).get('type') === (which === 3 ? 'Parameter' : 'Result')) {
      candidates.set(tag.start, tag);
    }
  });
  if (!net) return notIr('it has no <net> element');
  const ends = (reach: number) => file.view('back', file.size - reach, file.size).lastIndexOf('</net>') >= 0;
  if (!ends(1024) && !ends(64 * 1024)) return notIr('it ends before </net> (cut short?)');
  complete(net, 'net');
  const version = Number(attributes(net.text).get('version') ?? 0);
  if (!firstLayer) return notIr('it has no layers');
  complete(firstLayer, 'layer');
  const bodies = new Bodies(bodyTags);
  // The graph's own edges come after its layers, so its <edges> is the last one outside a body: found from the end.
  const edgesAt = lastOutside(file, bodies, Buffer.from('<edges'), 'edges', file.size) ?? 0;
  file.searched = 0;
  const lookup = new Lookup(file, bodies, edgesAt);
  const layers = [...candidates.values()]
    .filter((tag) => !bodies.nested(tag.start))
    .sort((a, b) => a.start - b.start)
    .map((tag) => {
      complete(tag, 'layer');
      return layerOf(tag, file.element(tag));
    });
  const inputs: OpenVinoTensor[] = [];
  const outputs: OpenVinoTensor[] = [];
  for (const layer of layers) {
    if (layer.type === 'Parameter') {
      const port = ports(section(layer.body, 'output'))[0];
      const elementType = dataOf(layer.body)?.get('element_type');
      inputs.push(tensor(layer, port, port?.precision || (elementType ?? '').toUpperCase(), shapeOf(layer.body, port)));
    } else {
      // A Result's tensor is the one its input edge comes from: the names are on the producing layer's port.
      const own = ports(section(layer.body, 'input'))[0];
      const edge = lookup.edgeInto(layer.id);
      const producer = edge ? lookup.layerById(edge.get('from-layer') ?? '', layer.at) : undefined;
      const from = producer ? ports(section(producer.body, 'output')).find((p) => p.id === edge!.get('from-port')) : undefined;
      const names = [...new Set([...(from?.names ?? []), ...(own?.names ?? [])])];
      const port = { id: '0', precision: own?.precision || from?.precision || '', names, dims: own?.dims ?? from?.dims ?? [] };
      outputs.push(tensor(layer, port, port.precision, port.dims));
    }
  }
  return { ok: true, model: { version, inputs, outputs } };
}

function layerOf(tag: Tag, body: string): Layer {
  const attrs = attributes(tag.text);
  return { at: tag.start, id: attrs.get('id') ?? '', name: attrs.get('name') ?? '', type: attrs.get('type') ?? '', body };
}

/** The offset of the last `needle` before `before` that starts a `name` element outside any body, searched backwards. */
function lastOutside(file: IrFile, bodies: Bodies, needle: Buffer, name: string, before: number): number | undefined {
  // What is looked for is most often near: the blocks grow from STEP to CHUNK.
  for (let pos = before, block = STEP; pos > 0; pos -= block, block = Math.min(CHUNK, block * 4)) {
    const from = Math.max(0, pos - block);
    const view = file.view('back', from, pos + needle.length);
    file.searched += view.length;
    for (let i = view.lastIndexOf(needle); i >= 0; i = i > 0 ? view.lastIndexOf(needle, i - 1) : -1) {
      if (from + i >= before) continue;
      // A hit's tag is read into another buffer, so `view` stays valid.
      if (isElement(file.tagAt(from + i), name) && !bodies.nested(from + i)) return from + i;
    }
  }
  return undefined;
}

/**
 * Finds what a Result needs, the edge into it and the layer that edge comes from: by searching for the serializer's
 * spelling, one Result at a time, until that has cost more than reading the file twice (many Results) or does not
 * find it (a hand-written IR); then from an index of the edges or the layers, read as text once.
 */
class Lookup {
  private edges?: Map<string, Map<string, string>>;
  private layers?: Map<string, Layer>;

  constructor(
    private readonly file: IrFile,
    private readonly bodies: Bodies,
    private readonly edgesAt: number,
  ) {}

  /** The attributes of the edge of the top-level graph that ends at layer `id`. */
  edgeInto(id: string): Map<string, string> | undefined {
    const file = this.file;
    if (!file.overBudget) {
      let found: Map<string, string> | undefined;
      const needle: Needle = { bytes: Buffer.from(`to-layer="${id}"`), active: true };
      file.scan([needle], this.edgesAt, file.size, (_w, _at, tag) => {
        if (!isElement(tag, 'edge')) return;
        found = attributes(tag.text);
        needle.active = false;
      });
      file.searched += file.size - this.edgesAt;
      if (found) return found;
    }
    // Spelled otherwise (single quotes, spaces around `=`), or many Results: an index of the edges.
    if (!this.edges) {
      this.edges = new Map();
      for (const m of file.text(this.edgesAt, file.size).matchAll(/<edge\b([^>]*?)\/?>/g)) {
        const attrs = attributes(m[1]!);
        const to = attrs.get('to-layer');
        if (to !== undefined && !this.edges.has(to)) this.edges.set(to, attrs);
      }
    }
    return this.edges.get(id);
  }

  /** The top-level layer `id`: searched back from `before` (a producer precedes what it feeds), then up to the edges. */
  layerById(id: string, before: number): Layer | undefined {
    const file = this.file;
    const end = this.edgesAt || file.size;
    if (!file.overBudget) {
      const needle = Buffer.from(`<layer id="${id}"`);
      const accept = (at: number): Layer | undefined => {
        const tag = file.tagAt(at);
        if (!isElement(tag, 'layer') || this.bodies.nested(at)) return undefined;
        complete(tag, 'layer');
        return layerOf(tag, file.element(tag));
      };
      const back = lastOutside(file, this.bodies, needle, 'layer', before);
      if (back !== undefined) return accept(back);
      let found: Layer | undefined;
      const forward: Needle = { bytes: needle, active: true };
      file.scan([forward], before, end, (_w, at) => {
        found ??= accept(at);
        if (found) forward.active = false;
      });
      if (found) return found;
      file.searched += end - before;
    }
    // Spelled otherwise, or many Results: an index of the layers, read as text once.
    this.layers ??= this.indexLayers(end);
    return this.layers.get(id);
  }

  private indexLayers(end: number): Map<string, Layer> {
    const index = new Map<string, Layer>();
    const text = this.file.text(0, end);
    let byte = 0;
    let char = 0;
    let close = 0;
    for (const m of text.matchAll(/<layer\b([^>]*)>/g)) {
      byte += Buffer.byteLength(text.slice(char, m.index));
      char = m.index;
      const attrs = attributes(m[1]!);
      const id = attrs.get('id');
      if (id === undefined || index.has(id) || this.bodies.nested(byte)) continue;
      // The next `</layer>`, searched for again only once passed (and never once missing): linear in the text.
      if (close >= 0 && close < m.index) close = text.indexOf('</layer>', m.index);
      const body = m[1]!.endsWith('/') || close < 0 ? m[0] : text.slice(m.index, Math.min(close, m.index + MAX_TAG));
      index.set(id, layerOf({ start: byte, end: byte + Buffer.byteLength(m[0]), text: m[0], complete: true }, body));
    }
    return index;
  }
}
