// aws-cdk-lib validates every template `cdk synth` writes with its CloudFormation Validate plugin
// (aws-cdk-lib/core/lib/private/synthesis-validation.js, pluginsToEvaluate: on unless CDK_VALIDATION=false), a Rust
// rule engine compiled to WebAssembly (@aws/cloudformation-validate, bundled in aws-cdk-lib). Starting it compiles its
// ~300 rules while its allocator grows the engine's memory from ~70 MB to ~270 MB a few pages at a time, and on
// Node 20 each growth costs a full garbage collection (V8 counts every new buffer of the memory, whole, as external
// memory): about 1,000 of them, measured with --trace-gc, ~10 s of CPU of the ~13 s the engine takes to start.
// Allocated once and freed before the engine starts, the memory stays with the allocator and the engine takes it from
// there: 3 collections, the engine starts in ~2.3 s (bench/validator-start.js), for ~10 MB more peak RSS (384 -> 394 MB:
// the reserve's pages are untouched until used). This does that, in the process that will synthesize.

import { dirname } from 'node:path';

/** What the engine's allocator is given before the engine starts: more than the ~200 MB its start-up allocates. */
export const VALIDATOR_RESERVE_BYTES = 256 * 2 ** 20;

/** What reserveValidatorMemory did, and why not when it did nothing. */
export type ValidatorReserve =
  | { reserved: true; memory: { readonly buffer: ArrayBuffer } }
  | { reserved: false; reason: 'validation off' | 'already loaded' | 'not found' | 'unexpected module' };

/**
 * Loads aws-cdk-lib's template validator and has its allocator take `bytes` at once (allocated, then freed: the
 * allocator keeps what the memory grew by), so that the engine aws-cdk-lib starts at synth time grows its memory
 * (each growth a full GC) a few times instead of ~1,000. Call it before `app.synth()`; it does nothing when the
 * validation is off (CDK_VALIDATION=false, as aws-cdk-lib reads it), when the validator was already loaded, or when
 * the module is not what it expects (another aws-cdk-lib): the synth is then exactly as without it.
 */
export function reserveValidatorMemory(bytes: number = VALIDATOR_RESERVE_BYTES): ValidatorReserve {
  if (process.env.CDK_VALIDATION === 'false') return { reserved: false, reason: 'validation off' };
  let modulePath: string;
  try {
    // The copy aws-cdk-lib itself requires (its bundled dependency), so the same module instance, the same memory.
    modulePath = require.resolve('@aws/cloudformation-validate', { paths: [dirname(require.resolve('aws-cdk-lib'))] });
  } catch {
    return { reserved: false, reason: 'not found' };
  }
  if (require.cache[modulePath]) return { reserved: false, reason: 'already loaded' };
  // The module instantiates its WebAssembly when it loads and keeps the instance to itself: the instance is seen as it
  // is made, then WebAssembly.Instance is put back before anything else runs.
  const wasm = (globalThis as unknown as { WebAssembly: WasmGlobal }).WebAssembly;
  const Instance = wasm.Instance;
  let made: { exports: Record<string, unknown> } | undefined;
  wasm.Instance = new Proxy(Instance, {
    construct(target, args, newTarget) {
      const instance = Reflect.construct(target, args, newTarget) as { exports: Record<string, unknown> };
      made ??= instance;
      return instance;
    },
  });
  try {
    require(modulePath);
  } finally {
    wasm.Instance = Instance;
  }
  // wasm-bindgen's exports: its allocator (the one every string and array handed to the engine goes through).
  const { __wbindgen_malloc: malloc, __wbindgen_free: free, memory } = made?.exports ?? {};
  if (typeof malloc !== 'function' || typeof free !== 'function' || !(memory instanceof wasm.Memory)) {
    return { reserved: false, reason: 'unexpected module' };
  }
  const pointer = (malloc as (size: number, align: number) => number)(bytes, 8);
  (free as (pointer: number, size: number, align: number) => void)(pointer, bytes, 8);
  return { reserved: true, memory: memory as { readonly buffer: ArrayBuffer } };
}

/** The part of the WebAssembly global used here (the project's lib, ES2023 without the DOM, does not declare it). */
interface WasmGlobal {
  Instance: new (...args: never[]) => object;
  Memory: abstract new (...args: never[]) => object;
}
