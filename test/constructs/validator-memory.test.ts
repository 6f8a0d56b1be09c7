// reserveValidatorMemory (constructs/validator-memory.ts): the allocator of aws-cdk-lib's template validator is given its
// memory at once, so that what the engine allocates later comes from it instead of growing the memory (on Node 20 a
// full GC per growth). The real `cdk synth` with the validation on runs in bin-app.test.ts.
import { dirname } from 'node:path';
import { reserveValidatorMemory } from '../../constructs/validator-memory';

const modulePath = require.resolve('@aws/cloudformation-validate', { paths: [dirname(require.resolve('aws-cdk-lib'))] });
type Validate = { TemplateModel: new (template: { readBytes(): Uint8Array }) => unknown };

/** Hands the validator a template of `size` bytes (it copies them into its memory, then refuses them: over 10 MB). */
function handOver(validate: Validate, size: number): void {
  expect(() => new validate.TemplateModel({ readBytes: () => new Uint8Array(size) })).toThrow(/maximum size/);
}

describe('reserveValidatorMemory', () => {
  const validation = process.env.CDK_VALIDATION; // the test setup turns it off for every other test
  afterEach(() => {
    process.env.CDK_VALIDATION = validation;
    jest.resetModules();
  });

  it('does nothing, and loads nothing, when the validation is off', () => {
    process.env.CDK_VALIDATION = 'false';
    expect(reserveValidatorMemory()).toEqual({ reserved: false, reason: 'validation off' });
    expect(require.cache[modulePath]).toBeUndefined();
  });

  it('gives the allocator its memory at once: what the validator allocates later grows the memory no more', () => {
    delete process.env.CDK_VALIDATION;
    // A reserve just over the 10 MB a template may have (the default is 256 MB): the engine copies and scans each byte
    // handed to it, ~10 ms of CPU per MB, so the templates below are the smallest that prove the point.
    const reserve = 16 * 2 ** 20;
    const outcome = reserveValidatorMemory(reserve);
    if (!outcome.reserved) throw new Error(`not reserved: ${outcome.reason}`);
    // The engine's instance was made with the budget that keeps its functions in baseline code (bench/validator-start.js
    // measures what that saves: only CPU time tells it).
    expect(outcome.tierUp).toBe('held');
    const reserved = outcome.memory.buffer.byteLength;
    expect(reserved).toBeGreaterThan(reserve);
    // The module aws-cdk-lib will require: the one loaded, with the same memory. Within the reserve, no growth;
    const validate = require(modulePath) as Validate;
    handOver(validate, 12 * 2 ** 20);
    expect(outcome.memory.buffer.byteLength).toBe(reserved);
    // beyond it, the memory grows (as every allocation of the engine's start did, before).
    handOver(validate, 2 * reserve);
    expect(outcome.memory.buffer.byteLength).toBeGreaterThan(reserved);
    // Once loaded, the module is left alone (its memory may be in use).
    expect(reserveValidatorMemory(reserve)).toEqual({ reserved: false, reason: 'already loaded' });
  });

  it("leaves the tiering budget to the user when node was started with one (NODE_OPTIONS), and still reserves", () => {
    delete process.env.CDK_VALIDATION;
    const options = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `${options ?? ''} --wasm-tiering-budget=900000`;
    try {
      const outcome = reserveValidatorMemory(16 * 2 ** 20);
      if (!outcome.reserved) throw new Error(`not reserved: ${outcome.reason}`);
      expect(outcome.tierUp).toBe('as set by the user');
      expect(outcome.memory.buffer.byteLength).toBeGreaterThan(16 * 2 ** 20);
    } finally {
      if (options === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = options;
    }
  });
});
