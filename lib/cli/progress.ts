// A one-line progress report on a terminal (bytes, rate, ETA), for work that runs longer than about a second; on a
// pipe or in a log file (no CliIo.status) it prints nothing at all.

import { formatBytes } from '../format-bytes';
import type { CliIo } from './io';

/** Quick work never shows a progress line. */
const SHOW_AFTER_MS = 1000;
/** A terminal redraw a few times a second is enough to read, and costs nothing. */
const REDRAW_EVERY_MS = 200;

export interface Progress {
  /** `done` of `total` bytes so far. */
  update(done: number, total: number): void;
  /** Clears the line (the final result is printed by the command). */
  finish(): void;
}

/** `label  1.2 GiB of 3.4 GiB (35 %)  210 MiB/s  ETA 11 s`, drawn on `io.status` after a second. */
export function byteProgress(io: CliIo, label: string, now: () => number = Date.now): Progress {
  const status = io.status;
  if (!status) return { update: () => undefined, finish: () => undefined };
  const started = now();
  let drawn = 0;
  let shown = false;
  return {
    update(done, total) {
      const time = now();
      if (time - started < SHOW_AFTER_MS || time - drawn < REDRAW_EVERY_MS) return;
      drawn = time;
      shown = true;
      status(progressLine(label, done, total, (time - started) / 1000));
    },
    finish() {
      if (shown) status('');
    },
  };
}

/** The progress line's text. */
export function progressLine(label: string, done: number, total: number, seconds: number): string {
  const rate = seconds > 0 ? done / seconds : 0;
  const percent = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0;
  const eta = rate > 0 && total > done ? ` ETA ${duration((total - done) / rate)}` : '';
  return `${label}  ${formatBytes(done)} of ${formatBytes(total)} (${percent} %)  ${formatBytes(rate)}/s${eta}`;
}

function duration(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
