// aws-cdk-lib validates every template `cdk synth` writes with its CloudFormation Validate plugin
// (aws-cdk-lib/core/lib/private/synthesis-validation.js, pluginsToEvaluate: on unless CDK_VALIDATION=false), a Rust
// rule engine compiled to WebAssembly (@aws/cloudformation-validate, bundled in aws-cdk-lib). Starting it compiles its
// ~300 rules while its allocator grows the engine's memory from ~70 MB to ~270 MB a few pages at a time, and on
// Node 20 each growth costs a full garbage collection (V8 counts every new buffer of the memory, whole, as external
// memory): about 1,000 of them, measured with --trace-gc, ~10 s of CPU of the ~13 s the engine takes to start.
// Allocated once and freed before the engine starts, the memory stays with the allocator and the engine takes it from
// there: 3 collections, the engine starts in ~2.3 s (bench/validator-start.js), for ~10 MB more peak RSS (384 -> 394 MB:
// the reserve's pages are untouched until used). This does that, in the process that will synthesize.
// Then the engine's functions stay in V8's baseline code (Liftoff): V8 tiers a WebAssembly function up to its optimizing
// compiler (TurboFan, on background threads) once it has run through a budget (--wasm-tiering-budget, about 1.8 MB of
// code executed), and the engine's start makes it compile so many that a synth with the validation on took ~3.4 s more
// CPU in those threads than the engine's own ~2 s start (app process 8.3-9.0 s of CPU with tier-up, 5.4-6.0 s without,
// load 11-13 on 2 cores; its main thread ~4.5 s either way). The instance is made with a budget too large to run out
// during a synth, and the flag is put back for any other WebAssembly the process compiles later.

import { dirname } from 'node:path';
import { setFlagsFromString } from 'node:v8';

/** The tiering budget the engine's instance is made with: the largest V8 takes, never spent during a synth. */
export const VALIDATOR_TIERING_BUDGET = 2 ** 31 - 1;
/** V8's own default (src/flags/flag-definitions.h in v8/v8, DEFINE_INT(wasm_tiering_budget, 1800000, ...)). */
const DEFAULT_TIERING_BUDGET = 1_800_000;

/** What the engine's allocator is given before the engine starts: more than the ~200 MB its start-up allocates. */
export const VALIDATOR_RESERVE_BYTES = 256 * 2 ** 20;

/** What reserveValidatorMemory did, and why not when it did nothing. */
export type ValidatorReserve =
  | { reserved: true; memory: { readonly buffer: ArrayBuffer }; tierUp: 'held' | 'as set by the user' }
  | { reserved: false; reason: 'validation off' | 'already loaded' | 'not found' | 'unexpected module' };

/**
 * Loads aws-cdk-lib's template validator and has its allocator take `bytes` at once (allocated, then freed: the
 * allocator keeps what the memory grew by), so that the engine aws-cdk-lib starts at synth time grows its memory
 * (each growth a full GC) a few times instead of ~1,000. Call it before `app.synth()`; it does nothing when the
 * validation is off (CDK_VALIDATION=false, as aws-cdk-lib reads it), when the validator was already loaded, or when
 * the module is not what it expects (another aws-cdk-lib): the synth is then exactly as without it. The engine's instance
 * is made with a tiering budget it does not spend (VALIDATOR_TIERING_BUDGET), unless the process was started with a
 * --wasm-tiering-budget of its own (`tierUp` says which).
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
  // The budget is read when the instance is made (each function starts with it): raised for the require alone.
  const own = userTieringBudget();
  if (!own) setFlagsFromString(`--wasm-tiering-budget=${VALIDATOR_TIERING_BUDGET}`);
  try {
    require(modulePath);
  } finally {
    wasm.Instance = Instance;
    if (!own) setFlagsFromString(`--wasm-tiering-budget=${DEFAULT_TIERING_BUDGET}`);
  }
  // wasm-bindgen's exports: its allocator (the one every string and array handed to the engine goes through).
  const { __wbindgen_malloc: malloc, __wbindgen_free: free, memory } = made?.exports ?? {};
  if (typeof malloc !== 'function' || typeof free !== 'function' || !(memory instanceof wasm.Memory)) {
    return { reserved: false, reason: 'unexpected module' };
  }
  const pointer = (malloc as (size: number, align: number) => number)(bytes, 8);
  (free as (pointer: number, size: number, align: number) => void)(pointer, bytes, 8);
  return { reserved: true, memory: memory as { readonly buffer: ArrayBuffer }, tierUp: own ? 'as set by the user' : 'held' };
}

/** Whether the process was started with a --wasm-tiering-budget (node's arguments or NODE_OPTIONS): then it is left alone. */
function userTieringBudget(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /--wasm[-_]tiering[-_]budget/.test(arg));
}

/** The part of the WebAssembly global used here (the project's lib, ES2023 without the DOM, does not declare it). */
interface WasmGlobal {
  Instance: new (...args: never[]) => object;
  Memory: abstract new (...args: never[]) => object;
}
