// Scales every explicit timeout (`it(name, fn, 30_000)`, `beforeAll(fn, 180_000)`, `it.each(table)(name, fn, ms)`)
// by the run's load factor (jest.config.js, MME_TEST_TIMEOUT_SCALE), so a test that allows 30 s on a quiet machine
// allows 150 s on a machine five times busier, and a time limit is never the first thing a loaded machine breaks.

import { LOAD_SCALE } from './load-scale';

const factor = LOAD_SCALE;

type Callable = (...args: unknown[]) => unknown;

function scaleTimeout(args: unknown[]): unknown[] {
  const last = args.length - 1;
  if (last >= 1 && typeof args[last] === 'number' && typeof args[last - 1] === 'function') {
    return [...args.slice(0, last), Math.round((args[last] as number) * factor)];
  }
  return args;
}

/** `original` with its timeout argument scaled, keeping its members (`.each`, `.skip`, `.only`, `.failing`...). */
function scaled<T extends Callable>(original: T, depth = 0): T {
  const wrapper = function (this: unknown, ...args: unknown[]) {
    return original.apply(this, scaleTimeout(args));
  } as unknown as T;
  for (const key of Object.keys(original) as Array<keyof T>) {
    const member = original[key];
    if (key === 'each' && typeof member === 'function') {
      // it.each(table) returns the function that takes (name, fn, timeout).
      wrapper[key] = ((...table: unknown[]) => scaled((member as Callable)(...table) as Callable)) as T[keyof T];
    } else if (depth < 2 && typeof member === 'function') {
      wrapper[key] = scaled(member as Callable, depth + 1) as T[keyof T];
    } else {
      wrapper[key] = member;
    }
  }
  return wrapper;
}

if (factor !== 1) {
  const globals = globalThis as unknown as Record<string, Callable>;
  for (const name of ['it', 'test', 'beforeAll', 'beforeEach', 'afterAll', 'afterEach']) {
    globals[name] = scaled(globals[name]!);
  }
}

export {};
