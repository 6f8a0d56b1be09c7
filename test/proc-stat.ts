// A process's state and parent as Linux's /proc/<pid>/stat gives them, for tests that check what a process left
// running (the fuzz watcher) or find a process among another's children (the differential fuzz's oracles).

import { readFileSync } from 'node:fs';

export interface ProcStat {
  /** R, S, D, Z (a zombie: ended, not yet reaped), T, ... */
  readonly state: string;
  readonly ppid: number;
}

/** `pid`'s state and parent, or undefined when there is no such process (or no /proc). */
export function procStat(pid: number | string): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // pid (comm) state ppid ...: comm may hold spaces and parentheses, so the fields are read after its last ')'.
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: state!, ppid: Number(ppid) };
}
