// Oracle answers recorded in the repository: what protoc and cfn-lint answered for the exact inputs the suite gives
// them, keyed by the tool's version and a hash of the input, so that a clean clone (CI) asks the tools only about
// inputs they have not answered yet. On a clean clone the two oracles took about 45 s of the suite's CPU (protoc ~850
// runs, cfn-lint over ~100 templates), a sixth of all of it, for answers that only change when the inputs or the
// tools do (issue 27).
//
// The recording is checked, not only trusted: every run asks the tool again about a few recorded inputs, picked at
// random (RECHECK_VARIABLE sets how many), and fails naming the input when the tool's answer is not the recorded one
// (with MME_ORACLE_RECHECK=100000 a run asks about them all). A new or changed input is asked live, as before; a tool
// of another version matches no recorded key.
// `npm run record-oracle-answers` (scripts/record-oracle-answers.js) runs the suite with every oracle asked live and
// writes the recordings anew from what the tools answered.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MACHINE_PATH } from './machine-path';

/** Set by the record script to a directory: each oracle asks its tool about everything and stages the answers there. */
export const RECORD_VARIABLE = 'MME_ORACLE_RECORD';
/** How many recorded answers each oracle asks its tool again per run (a number; 0 turns the recheck off). */
export const RECHECK_VARIABLE = 'MME_ORACLE_RECHECK';

/** The staging directory when the suite runs to record, else undefined. */
export function recordingInto(): string | undefined {
  return process.env[RECORD_VARIABLE] || undefined;
}

/**
 * The recording an oracle uses: the file `variable` names, none when it is `off`; by default `file`, unless the
 * oracle's cache variable is set (off, or elsewhere: the oracle's own tests), which then turns it off too.
 */
export function recordingFile(variable: string, cacheVariable: string, file: string): string | undefined {
  const setting = process.env[variable];
  if (setting === 'off') return undefined;
  return setting || (process.env[cacheVariable] === undefined ? file : undefined);
}

/** The recorded answers in `file` (a recording's JSON object), or undefined when there is none or it is not JSON. */
export function readRecording<T extends object>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

let staged = 0;

/**
 * Stages what one oracle call answered (record mode): `header` (the tool's version and settings) and the `answers`
 * under `field`, which the record script merges over a run. An answer that names an absolute path of one machine (an
 * upstream config's engine directory, read by protoc) is left out: no tracked file names one (MACHINE_PATH), so
 * that input is asked live each run.
 */
export function stageAnswers(oracle: string, header: object, field: string, answers: Record<string, unknown>): void {
  const dir = recordingInto();
  if (!dir) return;
  const kept = Object.fromEntries(Object.entries(answers).filter(([, answer]) => !MACHINE_PATH.test(JSON.stringify(answer))));
  mkdirSync(join(dir, oracle), { recursive: true });
  writeFileSync(join(dir, oracle, `${process.pid}-${staged++}.json`), JSON.stringify({ ...header, [field]: kept }));
}

/** How many recorded answers to ask again: RECHECK_VARIABLE, else `fallback`. */
export function recheckCount(fallback: number): number {
  const set = Number(process.env[RECHECK_VARIABLE]);
  return process.env[RECHECK_VARIABLE] !== undefined && Number.isInteger(set) && set >= 0 ? set : fallback;
}

/** Up to `count` of `items`, picked at random (each run asks about others). */
export function pickAtRandom<T>(items: readonly T[], count: number): T[] {
  const pool = [...items];
  const picked: T[] = [];
  while (picked.length < count && pool.length > 0) picked.push(pool.splice(Math.floor(Math.random() * pool.length), 1)[0]!);
  return picked;
}

