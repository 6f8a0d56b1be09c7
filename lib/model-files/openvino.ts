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


function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([\w:.-]+)\s*=\s*("([^"]*)"|'([^']*)')/g)) out.set(m[1]!, unescapeXml(m[3] ?? m[4] ?? ''));
  return out;
}

function unescapeXml(s: string): string {
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

/** The ports of one `<input>` or `<output>` section of a layer. */
function ports(section: string | undefined): Port[] {
  if (!section) return [];
  const out: Port[] = [];
  for (const m of section.matchAll(/<port\b([^>]*?)(\/>|>([\s\S]*?)<\/port>)/g)) {
    const attrs = attributes(m[1]!);
    // A bounded dimension (`1..10`) or `?` is dynamic: -1, which the backend's doesMatch never refuses.
    const dims = [...(m[3] ?? '').matchAll(/<dim>([^<]*)<\/dim>/g)].map((d) => (/^\s*\d+\s*$/.test(d[1]!) ? Number(d[1]) : -1));
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

const section = (body: string, tag: 'input' | 'output') => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(body)?.[1];

function layout(body: string): string | undefined {
  for (const m of body.matchAll(/<attribute\b([^>]*?)\/?>/g)) {
    const attrs = attributes(m[1]!);
    if (attrs.get('name') === 'layout') return attrs.get('layout') ?? attrs.get('value');
  }
  return undefined;
}

function shapeOf(body: string, port: Port | undefined): number[] | undefined {
  // A dynamic rank is written as shape="..." on a Parameter; ports then have no dims.
  const data = /<data\b([^>]*?)\/?>/.exec(body);
  if (data && attributes(data[1]!).get('shape') === '...') return undefined;
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
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

// A big IR has hundreds of thousands of layers, and the backend needs only its Parameters and Results. So the file is
// not parsed: one pass searches it, a chunk at a time, for the few words that mark what is needed (`Parameter`,
// `Result`, `<edges`, sub-graph `body>` tags) with Buffer.indexOf, which runs natively; only the tags around those hits
// and the few layers they name are decoded. An IR of 20,000 layers (4.3 MiB) went from 40 ms (regular expressions over
// the whole text) to about 1 ms. The lookups search for the form OpenVINO's serializer writes (`<layer id="7"`,
// `to-layer="7"`) and fall back to reading the region as text when a hand-written IR spells it otherwise.

/** Bytes read per step: a chunk stays in the CPU's cache while each needle is searched for in it. */
const CHUNK = 256 * 1024;
/** Bytes read past a chunk's end, so a word that straddles two chunks is found in the first. */
const OVERLAP = 64;
/** How far around a hit its tag is looked for when the chunk does not hold all of it. */
const TAG_REACH = 4096;
const LT = 0x3c;
const GT = 0x3e;
let scanBuffer: Buffer | undefined;

interface Tag {
  /** Byte offset of its `<`. */
  readonly start: number;
  /** From `<` to `>`, both included. */
  readonly text: string;
}

interface Needle {
  readonly bytes: Buffer;
  active: boolean;
}

class IrFile {
  readonly size: number;

  constructor(private readonly source: ByteSource) {
    this.size = source.size;
  }

  bytes(start: number, end: number): Buffer {
    const from = Math.max(0, start);
    const buf = Buffer.allocUnsafe(Math.max(0, Math.min(this.size, end) - from));
    return buf.subarray(0, this.readInto(buf, buf.length, from));
  }

  text(start: number, end: number): string {
    return this.bytes(start, end).toString('utf8');
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

  /** Calls `onHit` with each place an active needle occurs in [from, to); needles found per chunk, not in file order. */
  scan(needles: readonly Needle[], from: number, to: number, onHit: (which: number, at: number, view: Buffer, viewAt: number) => void) {
    const buf = (scanBuffer ??= Buffer.allocUnsafe(CHUNK + OVERLAP));
    for (let pos = from; pos < to; pos += CHUNK) {
      const view = buf.subarray(0, this.readInto(buf, Math.min(CHUNK + OVERLAP, to - pos), pos));
      const limit = Math.min(CHUNK, view.length);
      for (let w = 0; w < needles.length; w++) {
        const needle = needles[w]!;
        if (!needle.active) continue;
        for (let i = view.indexOf(needle.bytes); needle.active && i >= 0 && i < limit; i = view.indexOf(needle.bytes, i + 1)) {
          onHit(w, pos + i, view, pos);
        }
      }
    }
  }

  /** The tag that `at` is inside of, read from `view` (holding the file from `viewAt`) or, at its edges, from the file. */
  tagAround(at: number, view?: Buffer, viewAt = 0): Tag | undefined {
    const inView = view ? tagIn(view, at - viewAt, viewAt) : 'unknown';
    if (inView !== 'unknown') return inView;
    const from = Math.max(0, at - TAG_REACH);
    const near = tagIn(this.bytes(from, at + TAG_REACH), at - from, from);
    return near === 'unknown' ? undefined : near;
  }

  /** The text of the element whose start tag is `tag`, up to its `</name>` (an element of that name holds none). */
  element(tag: Tag, name: string): string {
    if (tag.text.endsWith('/>')) return tag.text;
    const close = `</${name}>`;
    for (let reach = 16 * 1024; ; reach *= 4) {
      const text = this.text(tag.start, tag.start + reach);
      const end = text.indexOf(close);
      if (end >= 0) return text.slice(0, end);
      if (tag.start + reach >= this.size) return text;
    }
  }
}

/** The tag around index `i` of `view`, undefined when `i` is outside any tag, 'unknown' when `view` holds too little. */
function tagIn(view: Buffer, i: number, viewAt: number): Tag | undefined | 'unknown' {
  // `<` never occurs inside an attribute value, so the last one before the hit opens its tag, if any does.
  const lt = view.lastIndexOf(LT, i);
  if (lt < 0) return viewAt === 0 ? undefined : 'unknown';
  const gt = view.indexOf(GT, lt);
  if (gt < 0) return 'unknown';
  return gt < i ? undefined : { start: viewAt + lt, text: view.toString('utf8', lt, gt + 1) };
}

const isElement = (tag: Tag | undefined, name: string): tag is Tag =>
  tag !== undefined && tag.text.startsWith(`<${name}`) && /[\s/>]/.test(tag.text[name.length + 1] ?? '');

const notIr = (why: string): OpenVinoReadResult => ({ ok: false, reason: `is not an OpenVINO IR: ${why}` });

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
    let depth = 0;
    for (const mark of this.marks) {
      if (mark.at > at) break;
      depth = mark.depth;
    }
    return depth > 0;
  }
}

function readIr(file: IrFile): OpenVinoReadResult {
  const head = file.text(0, 1024).replace(/^\uFEFF/, '').trimStart();
  if (!head.startsWith('<')) return notIr('it is not XML');
  // 'Param' rather than 'Parameter': Buffer.indexOf finds a needle of fewer than 7 bytes by memchr on its first
  // byte, far faster than its Boyer-Moore-Horspool for longer ones when that byte is rare, as P, R and b are in an IR.
  const needles: Needle[] = ['<net', '<layer', 'body>', 'Param', 'Result'].map((w) => ({ bytes: Buffer.from(w), active: true }));
  let net: Tag | undefined;
  let hasLayer = false;
  const bodyTags: Tag[] = [];
  const candidates = new Map<number, Tag>();
  file.scan(needles, 0, file.size, (which, at, view, viewAt) => {
    const tag = file.tagAround(which <= 1 ? at + 1 : at, view, viewAt);
    if (which === 0 && isElement(tag, 'net')) {
      net = tag;
      needles[0]!.active = false;
    } else if (which === 1 && isElement(tag, 'layer')) {
      hasLayer = true;
      needles[1]!.active = false;
    } else if (which === 2 && tag && /^<\/?\w*body>$/.test(tag.text)) bodyTags.push(tag);
    else if (which >= 3 && isElement(tag, 'layer') && attributes(tag.text).get('type') === (which === 3 ? 'Parameter' : 'Result')) {
      candidates.set(tag.start, tag);
    }
  });
  if (!net) return notIr('it has no <net> element');
  const version = Number(attributes(net.text).get('version') ?? 0);
  if (file.bytes(file.size - 64 * 1024, file.size).lastIndexOf('</net>') < 0) return notIr('it ends before </net> (cut short?)');
  if (!hasLayer) return notIr('it has no layers');
  const bodies = new Bodies(bodyTags);
  // The graph's own edges come after its layers, so its <edges> is the last one outside a body: found from the end.
  const edgesAt = lastOutside(file, bodies, Buffer.from('<edges'), 'edges', file.size) ?? 0;
  const layers = [...candidates.values()]
    .filter((tag) => !bodies.nested(tag.start))
    .sort((a, b) => a.start - b.start)
    .map((tag) => layerOf(tag, file.element(tag, 'layer')));
  const inputs: OpenVinoTensor[] = [];
  const outputs: OpenVinoTensor[] = [];
  for (const layer of layers) {
    if (layer.type === 'Parameter') {
      const port = ports(section(layer.body, 'output'))[0];
      const data = /<data\b([^>]*?)\/?>/.exec(layer.body);
      const elementType = data ? attributes(data[1]!).get('element_type') : undefined;
      inputs.push(tensor(layer, port, port?.precision || (elementType ?? '').toUpperCase(), shapeOf(layer.body, port)));
    } else {
      // A Result's tensor is the one its input edge comes from: the names are on the producing layer's port.
      const own = ports(section(layer.body, 'input'))[0];
      const edge = edgeInto(file, layer.id, edgesAt);
      const producer = edge ? layerById(file, bodies, edge.get('from-layer') ?? '', layer.at, edgesAt) : undefined;
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
  for (let pos = before; pos > 0; pos -= CHUNK) {
    const from = Math.max(0, pos - CHUNK);
    const view = file.bytes(from, pos + needle.length);
    for (let i = view.lastIndexOf(needle); i >= 0; i = i > 0 ? view.lastIndexOf(needle, i - 1) : -1) {
      if (from + i >= before) continue;
      if (isElement(file.tagAround(from + i + 1, view, from), name) && !bodies.nested(from + i)) return from + i;
    }
  }
  return undefined;
}

/** The attributes of the edge of the top-level graph that ends at layer `id`. */
function edgeInto(file: IrFile, id: string, edgesAt: number): Map<string, string> | undefined {
  let found: Map<string, string> | undefined;
  const needle: Needle = { bytes: Buffer.from(`to-layer="${id}"`), active: true };
  file.scan([needle], edgesAt, file.size, (_w, at, view, viewAt) => {
    const tag = file.tagAround(at, view, viewAt);
    if (!isElement(tag, 'edge')) return;
    found = attributes(tag.text);
    needle.active = false;
  });
  if (found) return found;
  // Spelled otherwise (single quotes, spaces around `=`): read the edges as text.
  for (const m of file.text(edgesAt, file.size).matchAll(/<edge\b([^>]*?)\/?>/g)) {
    const attrs = attributes(m[1]!);
    if (attrs.get('to-layer') === id) return attrs;
  }
  return undefined;
}

/** The top-level layer `id`: searched back from `before` (a producer precedes what it feeds), then up to `end`. */
function layerById(file: IrFile, bodies: Bodies, id: string, before: number, end: number): Layer | undefined {
  const needle = Buffer.from(`<layer id="${id}"`);
  const accept = (at: number): Layer | undefined => {
    const tag = file.tagAround(at + 1);
    return isElement(tag, 'layer') && !bodies.nested(at) ? layerOf(tag, file.element(tag, 'layer')) : undefined;
  };
  const back = lastOutside(file, bodies, needle, 'layer', before);
  if (back !== undefined) return accept(back);
  let found: Layer | undefined;
  const forward: Needle = { bytes: needle, active: true };
  file.scan([forward], before, end || file.size, (_w, at) => {
    found ??= accept(at);
    if (found) forward.active = false;
  });
  if (found) return found;
  // Spelled otherwise: read the layers as text.
  const text = file.text(0, end || file.size);
  for (const m of text.matchAll(/<layer\b([^>]*)>/g)) {
    const attrs = attributes(m[1]!);
    if (attrs.get('id') !== id) continue;
    const close = m[1]!.endsWith('/') ? -1 : text.indexOf('</layer>', m.index);
    const tag: Tag = { start: Buffer.byteLength(text.slice(0, m.index)), text: m[0] };
    if (!bodies.nested(tag.start)) return layerOf(tag, close < 0 ? m[0] : text.slice(m.index, close));
  }
  return undefined;
}
