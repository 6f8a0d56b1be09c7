// Writes small TorchScript archives laid out as torch.jit.save writes them (pytorch/pytorch caffe2/serialize/
// inline_container.cc: one top directory, tensors stored under data/, code deflated or stored), without PyTorch:
// <archive>/data.pkl whose first GLOBAL is the root class, <archive>/code/__torch__/...py with its forward, weights.

import { deflateRawSync } from 'node:zlib';
import { crc32 } from '../../lib/archive/crc32';

export interface ZipInput {
  readonly name: string;
  readonly data: Buffer;
  /** Deflate it (method 8), as torch.jit.save does the code files. @default false */
  readonly deflate?: boolean;
}

/** A zip of these entries: local headers, data, central directory, end record (no zip64). */
export function zip(entries: readonly ZipInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = entry.deflate ? deflateRawSync(entry.data) : entry.data;
    const crc = crc32(entry.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(entry.deflate ? 8 : 0, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export interface TorchScriptSpec {
  /** forward's parameters after self, as the serialized code writes them. */
  readonly forward: string;
  /** The root class's module. @default '__torch__' */
  readonly module?: string;
  /** @default 'Net' */
  readonly className?: string;
  /** @default 'archive' */
  readonly archive?: string;
  /** Bytes of weights under data/. @default 64 */
  readonly weightBytes?: number;
  /** Leave out code/ (what torch.save writes). @default false */
  readonly noCode?: boolean;
  /** Store the code rather than deflate it. @default false */
  readonly storedCode?: boolean;
}

/** A TorchScript model.pt whose root module's forward takes `spec.forward`. */
export function torchScript(spec: TorchScriptSpec): Buffer {
  const archive = spec.archive ?? 'archive';
  const module = spec.module ?? '__torch__';
  const className = spec.className ?? 'Net';
  // PROTO 2, GLOBAL module\nname\n, BINPUT 0, EMPTY_TUPLE, NEWOBJ, EMPTY_DICT, BUILD, STOP: torch's Pickler's shape.
  const pickle = Buffer.concat([Buffer.from([0x80, 0x02]), Buffer.from(`c${module}\n${className}\nq\x00)\x81}b.`, 'latin1')]);
  // One parameter a line, as torch's printer writes them (a comma inside brackets stays).
  const params = spec.forward ? `,\n    ${spec.forward.replace(/, (?![^[]*\])/g, ',\n    ')}` : '';
  const code =
    `class Helper(Module):\n  __parameters__ = []\n  def forward(self: ${module}.Helper,\n    other: int) -> Tensor:\n    return other\n` +
    `class ${className}(Module):\n  __parameters__ = ["weight", ]\n  __buffers__ = []\n  weight : Tensor\n  training : bool\n` +
    `  def forward(self: ${module}.${className}${params}) -> Tensor:\n` +
    '    return torch.zeros([1])\n';
  const codePath = module === '__torch__' ? 'code/__torch__.py' : `code/${module.replace(/\./g, '/')}.py`;
  return zip([
    { name: `${archive}/data.pkl`, data: pickle },
    ...(spec.noCode ? [] : [{ name: `${archive}/${codePath}`, data: Buffer.from(code), deflate: !spec.storedCode }]),
    { name: `${archive}/data/0`, data: Buffer.alloc(spec.weightBytes ?? 64, 7) },
    { name: `${archive}/constants.pkl`, data: Buffer.from([0x80, 0x02, 0x29, 0x2e]) },
    { name: `${archive}/version`, data: Buffer.from('3\n') },
  ]);
}
