// The run's load factor (jest.config.js sets MME_TEST_TIMEOUT_SCALE: the 1-minute load per core, from 1 to 5), for
// the deadlines a test sets itself. A deadline stands for "this hangs", never for "this is slow": scaled by the load,
// it still catches a hang (which never ends) without failing because the machine is busy.

/** 1 on a quiet machine, up to 5 on a busy one. */
export const LOAD_SCALE = Number(process.env.MME_TEST_TIMEOUT_SCALE) || 1;

/** `ms` allowed on a quiet machine, scaled by the run's load. */
export function loadScaled(ms: number): number {
  return Math.round(ms * LOAD_SCALE);
}
