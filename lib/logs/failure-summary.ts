// The failures of a window of events, per TargetModel: how many, on which instances, and the latest with its fix.
// What `mme-deploy status` shows under "Failures in the last hour".

import { FAILURE_KINDS, LogEvent } from './log-event';

export interface ModelFailures {
  /** The TargetModel; undefined for failures the log does not tie to one. */
  readonly targetModel?: string;
  readonly count: number;
  /** Instances that reported them, in the order first seen. */
  readonly instances: readonly string[];
  /** The most recent failure. */
  readonly last: LogEvent;
}

/**
 * Failure events grouped by TargetModel, the model with the most recent failure first. An ensemble's own failure
 * ("depends on a model that failed") is left out where the composing model's failure is there to show the cause.
 */
export function failuresByModel(events: readonly LogEvent[]): ModelFailures[] {
  const failures = events.filter((e) => FAILURE_KINDS.has(e.kind));
  const withCause = new Set(failures.filter((e) => e.failure?.code !== 'ensemble-dependency').map((e) => e.targetModel));
  const groups = new Map<string | undefined, LogEvent[]>();
  for (const e of failures) {
    if (e.failure?.code === 'ensemble-dependency' && withCause.has(e.targetModel)) continue;
    const list = groups.get(e.targetModel) ?? [];
    list.push(e);
    groups.set(e.targetModel, list);
  }
  return [...groups]
    .map(([targetModel, list]) => ({
      ...(targetModel !== undefined ? { targetModel } : {}),
      count: list.length,
      instances: [...new Set(list.map((e) => e.instance))],
      last: list.reduce((a, b) => (b.time.getTime() >= a.time.getTime() ? b : a)),
    }))
    .sort((a, b) => b.last.time.getTime() - a.last.time.getTime());
}
