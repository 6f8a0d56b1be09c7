// Reads what Triton's PyTorch backend learns from a TorchScript model.pt at load, without PyTorch and without reading
// the weights: the schema of the root module's `forward` (argument names and types), as torch.jit.save serializes it.
// The archive is a zip (zip.ts): <archive>/data.pkl pickles the root module, whose class is the first GLOBAL of the
// pickle; its code is Python source at <archive>/code/__torch__/<module path>.py, where `def forward(self: <class>,
// x: Tensor, ...)` carries the schema with every argument typed (pytorch/pytorch torch/csrc/jit/serialization/
// python_print.cc prints each argument's name and type). The tensors (<archive>/data/*) are never read.
// lib/repository/torchscript-rules.ts applies the backend.

import type { ByteSource } from './protobuf-wire';
import { readZipDirectory, readZipEntry, type ZipEntry } from './zip';

/** How the backend tells arguments apart (c10::TypeKind in pytorch_backend src/pt/model_instance_state.cc). */
export type TorchArgumentKind = 'class' | 'tensor' | 'list' | 'dict' | 'other';

export interface TorchArgument {
  readonly name: string;
  /** The type as the serialized code writes it (`Tensor`, `List[str]`, `Dict[str, Tensor]`, `int`). */
  readonly type: string;
  readonly kind: TorchArgumentKind;
}

export interface TorchScriptSummary {
  /** The root module's qualified class name (`__torch__.torchvision.models.resnet.ResNet`). */
  readonly rootClass: string;
  /** forward's schema arguments, `self` first; undefined when forward was not found in the code (say why). */
  readonly forward?: readonly TorchArgument[];
  /** Why forward's arguments are unknown, when they are. */
  readonly unknown?: string;
}

export type TorchScriptReadResult =
  | { readonly ok: true; readonly model: TorchScriptSummary }
  | { readonly ok: false; readonly reason: string };

/** Larger code and pickle entries are not read (a model's code files are kilobytes). */
const MAX_ENTRY = 16 * 1024 * 1024;

/** Reads model.pt from an open file. Never throws for what the file holds. */
export function readTorchScript(source: ByteSource): TorchScriptReadResult {
  if (source.size === 0) return { ok: false, reason: 'is empty' };
  try {
    return read(source);
  } catch (err) {
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

function read(source: ByteSource): TorchScriptReadResult {
  const dir = readZipDirectory(source);
  if (!dir.ok) return { ok: false, reason: `is not a TorchScript archive (the zip torch.jit.save writes): ${dir.reason}` };
  const byName = new Map(dir.entries.map((e) => [e.name, e]));
  // Every record is under one top directory (the archive's name: `archive/`, or the file's stem in older versions).
  const dataPkl = dir.entries.find((e) => /^[^/]+\/data\.pkl$/.test(e.name));
  if (!dataPkl) return { ok: false, reason: 'is a zip but not a TorchScript archive: it has no data.pkl' };
  const prefix = dataPkl.name.slice(0, -'data.pkl'.length);
  if (!dir.entries.some((e) => e.name.startsWith(`${prefix}code/`))) {
    return {
      ok: false,
      reason:
        'is a zip but not a TorchScript archive: it has no code/ (written by torch.save, not torch.jit.save?; ' +
        'torch::jit::load needs the serialized code)',
    };
  }
  const pickle = readZipEntry(source, dataPkl, MAX_ENTRY);
  if (typeof pickle === 'string') return { ok: true, model: { rootClass: '', unknown: pickle } };
  const rootClass = firstGlobal(pickle);
  if (!rootClass) return { ok: true, model: { rootClass: '', unknown: 'data.pkl does not start with the root module\'s class' } };
  const dot = rootClass.lastIndexOf('.');
  const module = rootClass.slice(0, dot);
  const className = rootClass.slice(dot + 1);
  const codeName = `${prefix}code/${module.replace(/\./g, '/')}.py`;
  const entry: ZipEntry | undefined = byName.get(codeName);
  if (!entry) return { ok: true, model: { rootClass, unknown: `the archive has no ${codeName.slice(prefix.length)}` } };
  const code = readZipEntry(source, entry, MAX_ENTRY);
  if (typeof code === 'string') return { ok: true, model: { rootClass, unknown: code } };
  const forward = forwardArguments(code.toString('utf8'), className);
  if (!forward) return { ok: true, model: { rootClass, unknown: `${codeName.slice(prefix.length)} has no forward for ${className}` } };
  return { ok: true, model: { rootClass, forward } };
}

/** The class named by the pickle's first GLOBAL (`c<module>\n<name>\n`), as torch's Pickler writes an object. */
function firstGlobal(pickle: Buffer): string | undefined {
  let at = 0;
  if (pickle[at] === 0x80) at += 2; // PROTO n
  if (pickle[at] === 0x95) at += 9; // FRAME (protocol 4)
  if (pickle[at] === 0x63) {
    const moduleEnd = pickle.indexOf(0x0a, at + 1);
    const nameEnd = moduleEnd < 0 ? -1 : pickle.indexOf(0x0a, moduleEnd + 1);
    if (nameEnd < 0) return undefined;
    return `${pickle.toString('utf8', at + 1, moduleEnd)}.${pickle.toString('utf8', moduleEnd + 1, nameEnd)}`;
  }
  // Protocol 4: SHORT_BINUNICODE module, MEMOIZE?, SHORT_BINUNICODE name, MEMOIZE?, STACK_GLOBAL.
  const parts: string[] = [];
  while (parts.length < 2 && pickle[at] === 0x8c) {
    const length = pickle[at + 1]!;
    parts.push(pickle.toString('utf8', at + 2, at + 2 + length));
    at += 2 + length;
    if (pickle[at] === 0x94) at += 1;
  }
  return parts.length === 2 && pickle[at] === 0x93 ? `${parts[0]}.${parts[1]}` : undefined;
}

/** forward's arguments in the class `className` of a serialized code file, or undefined when it is not there. */
export function forwardArguments(code: string, className: string): TorchArgument[] | undefined {
  const classAt = new RegExp(`^class ${className.replace(/\W/g, '\\$&')}\\(`, 'm').exec(code);
  if (!classAt) return undefined;
  const nextClass = code.slice(classAt.index + 1).search(/^class /m);
  const body = nextClass < 0 ? code.slice(classAt.index) : code.slice(classAt.index, classAt.index + 1 + nextClass);
  const def = /^[ \t]+def forward\(/m.exec(body);
  if (!def) return undefined;
  let depth = 0;
  let current = '';
  const params: string[] = [];
  for (let i = def.index + def[0].length; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === ')' && depth === 0) {
      if (current.trim()) params.push(current.trim());
      return params.map(argument);
    }
    if (ch === '(' || ch === '[') depth++;
    else if (ch === ')' || ch === ']') depth--;
    if (ch === ',' && depth === 0) {
      params.push(current.trim());
      current = '';
    } else current += ch;
  }
  return undefined;
}

function argument(param: string): TorchArgument {
  const colon = param.indexOf(':');
  const name = (colon < 0 ? param : param.slice(0, colon)).trim();
  const type = colon < 0 ? '' : param.slice(colon + 1).replace(/=[\s\S]*$/, '').replace(/\s+/g, ' ').trim();
  const kind: TorchArgumentKind = type.startsWith('__torch__.')
    ? 'class'
    : type === 'Tensor'
      ? 'tensor'
      : type.startsWith('List[')
        ? 'list'
        : type.startsWith('Dict[')
          ? 'dict'
          : 'other';
  return { name, type, kind };
}
