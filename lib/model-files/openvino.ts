// Reads what Triton's OpenVINO backend learns from an IR's model.xml at load, without OpenVINO: the Parameter layers
// (the model's inputs) and the Result layers (its outputs), each with the tensor names, element type, shape and layout
// OpenVINO gives them. The weights are in model.bin, which is never opened; the XML is the graph, read as text.
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

/** Reads model.xml from an open file. Never throws for what the file holds. */
export function readOpenVinoModel(source: ByteSource): OpenVinoReadResult {
  if (source.size === 0) return { ok: false, reason: 'is empty' };
  let text: string;
  try {
    // The XML is the graph (the weights are in model.bin): read whole, in one buffer.
    const bytes = Buffer.allocUnsafe(source.size);
    let done = 0;
    while (done < source.size) {
      const n = source.read(done === 0 ? bytes : bytes.subarray(done), source.size - done, done);
      if (n <= 0) break;
      done += n;
    }
    text = bytes.toString('utf8', 0, done);
  } catch (err) {
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  return parseIr(text);
}

const notIr = (why: string): OpenVinoReadResult => ({ ok: false, reason: `is not an OpenVINO IR: ${why}` });

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
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly body: string;
}

function parseIr(text: string): OpenVinoReadResult {
  const net = /<net\b([^>]*)>/.exec(text);
  if (!net) return notIr(text.trimStart().startsWith('<') ? 'it has no <net> element' : 'it is not XML');
  const version = Number(attributes(net[1]!).get('version') ?? 0);
  if (!text.includes('</net>')) return notIr('it ends before </net> (cut short?)');
  // Only the Parameters, the Results and the layers feeding Results are parsed: a big IR has tens of thousands of
  // layers, and reading each one's attributes would cost more than the rest of validate.
  const layerAt = (index: number, open: string): Layer => {
    const attrs = attributes(open);
    const selfClosing = open.endsWith('/');
    const end = selfClosing ? index : text.indexOf('</layer>', index);
    const body = selfClosing || end < 0 ? '' : text.slice(index, end);
    return { id: attrs.get('id') ?? '', name: attrs.get('name') ?? '', type: attrs.get('type') ?? '', body };
  };
  const wanted: Layer[] = [];
  let layerCount = 0;
  for (const m of text.matchAll(/<layer\b([^>]*)>/g)) {
    layerCount += 1;
    if (/\btype\s*=\s*["'](Parameter|Result)["']/.test(m[1]!)) wanted.push(layerAt(m.index!, m[1]!));
  }
  if (layerCount === 0) return notIr('it has no layers');
  const layerById = (id: string): Layer | undefined => {
    const m = new RegExp(`<layer\\b([^>]*\\bid\\s*=\\s*["']${id.replace(/\W/g, '')}["'][^>]*)>`).exec(text);
    return m ? layerAt(m.index, m[1]!) : undefined;
  };
  const section = (body: string, tag: 'input' | 'output') => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(body)?.[1];
  const layout = (body: string) => {
    for (const m of body.matchAll(/<attribute\b([^>]*?)\/?>/g)) {
      const attrs = attributes(m[1]!);
      if (attrs.get('name') === 'layout') return attrs.get('layout') ?? attrs.get('value');
    }
    return undefined;
  };
  const shapeOf = (body: string, port: Port | undefined): number[] | undefined => {
    // A dynamic rank is written as shape="..." on a Parameter; ports then have no dims.
    const data = /<data\b([^>]*?)\/?>/.exec(body);
    if (data && attributes(data[1]!).get('shape') === '...') return undefined;
    return port?.dims ?? [];
  };
  const tensor = (layer: Layer, port: Port | undefined, precision: string, dims: number[] | undefined): OpenVinoTensor => {
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
  };
  const resultIds = new Set(wanted.filter((l) => l.type === 'Result').map((l) => l.id));
  const edges = [...text.matchAll(/<edge\b([^>]*?)\/?>/g)]
    .filter((m) => /\bto-layer\s*=\s*["']([^"']*)["']/.exec(m[1]!)?.[1] !== undefined)
    .map((m) => attributes(m[1]!))
    .filter((e) => resultIds.has(e.get('to-layer') ?? ''));
  const inputs: OpenVinoTensor[] = [];
  const outputs: OpenVinoTensor[] = [];
  for (const layer of wanted) {
    if (layer.type === 'Parameter') {
      const port = ports(section(layer.body, 'output'))[0];
      const data = /<data\b([^>]*?)\/?>/.exec(layer.body);
      const elementType = data ? attributes(data[1]!).get('element_type') : undefined;
      inputs.push(tensor(layer, port, port?.precision || (elementType ?? '').toUpperCase(), shapeOf(layer.body, port)));
    } else if (layer.type === 'Result') {
      // A Result's tensor is the one its input edge comes from: the names are on the producing layer's port.
      const own = ports(section(layer.body, 'input'))[0];
      const edge = edges.find((e) => e.get('to-layer') === layer.id);
      const producer = edge ? layerById(edge.get('from-layer') ?? '') : undefined;
      const from = producer ? ports(section(producer.body, 'output')).find((p) => p.id === edge!.get('from-port')) : undefined;
      const names = [...new Set([...(from?.names ?? []), ...(own?.names ?? [])])];
      const port = { id: '0', precision: own?.precision || from?.precision || '', names, dims: own?.dims ?? from?.dims ?? [] };
      outputs.push(tensor(layer, port, port.precision, port.dims));
    }
  }
  return { ok: true, model: { version, inputs, outputs } };
}
