// The oracles of the differential archive fuzz (tar-differential-runner.ts): a shell that runs GNU tar (list and
// extract) and bsdtar (list) on each case it is handed, a few cases ahead of our reader, and reports their statuses.

import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { procStat } from '../proc-stat';

/**
 * The oracles' script: it reads case numbers on stdin and, for case <n>, runs GNU tar's verbose listing (into
 * <dir>/<n>/list), bsdtar's listing and GNU tar's extraction (into <dir>/<n>/gnu) on <dir>/<n>/case.tar.gz, then prints
 * `case <n> <list> <extract> <bsd>` (their statuses); before each tool it prints `run <n> <tool>`, so the runner can
 * stop a tool that does not end (OracleShell). The extraction is skipped (`-`) when GNU tar's listing refused the case
 * and bsdtar's accepted it: no verdict of the runner reads it then (GNU tar's counts as refusing, and what we extract
 * is only compared with what both refuse). About a quarter of the cases, a GNU tar and a gzip each. GNU tar lists in
 * the C locale, so every byte that is not printable ASCII is escaped alike; bsdtar in a UTF-8 one, since in the C
 * locale it fails on any UTF-8 name ("Pathname can't be converted from UTF-8 to current locale"). The shell ends when
 * its stdin does (the runner is done, or was killed).
 *
 * One shell for many cases, each tool a foreground command: a node spawn costs a fork of the whole runner, a shell's a
 * fork of the shell, and dash (Debian's `sh`) starts a foreground command with vfork(), so a tool costs its own exec
 * and little more. Measured on a busy 2-core VM (load 4-5), the fuzz's 300 cases in one shell: 20-23 s of CPU from bash
 * with each tool run in the background (`tool & wait $!`, a full fork each), 14-17 s from dash as here.
 */
const ORACLES = `
while read -r n; do
  c="$1/$n"
  echo "run $n list"
  LC_ALL=C tar --numeric-owner --quoting-style=escape -tvzf "$c/case.tar.gz" >"$c/list" 2>/dev/null; list=$?
  echo "run $n bsd"
  LC_ALL=C.UTF-8 bsdtar -tzf "$c/case.tar.gz" >/dev/null 2>&1; bsd=$?
  extract=-
  if [ "$list" = 0 ] || [ "$bsd" != 0 ]; then
    echo "run $n extract"
    LC_ALL=C tar -xzf "$c/case.tar.gz" -C "$c/gnu" >/dev/null 2>&1; extract=$?
  fi
  echo "case $n $list $extract $bsd"
done
`;

/** The tools' exit statuses on one case (128 + the signal's number when one was stopped). */
export interface ToolStatuses {
  readonly list: number;
  /** Undefined: not run, as GNU tar's listing refused the case and bsdtar's accepted it (ORACLES). */
  readonly extract: number | undefined;
  readonly bsd: number;
}

type Tool = 'list' | 'extract' | 'bsd';

/** Each tool's arguments up to its archive: how a stuck tool is told from the others. */
const TOOL_ARGS: Record<Tool, (archive: string) => string[]> = {
  list: (archive) => ['--numeric-owner', '--quoting-style=escape', '-tvzf', archive],
  extract: (archive) => ['-xzf', archive],
  bsd: (archive) => ['-tzf', archive],
};

/** A shell running ORACLES on the cases under one directory, and the statuses it has printed, by case number. */
export class OracleShell {
  private readonly child: ChildProcess;
  private readonly done = new Map<number, ToolStatuses>();
  private waiting?: { index: number; resolve: (statuses: ToolStatuses) => void; reject: (err: Error) => void };
  private toolTimer?: NodeJS.Timeout;
  private exited?: string;
  private readonly exit: Promise<void>;

  /**
   * @param dir the directory of the cases: case <n> is <dir>/<n>/case.tar.gz, with an empty <dir>/<n>/gnu
   * @param toolTimeoutMs past this a tool is stopped (SIGTERM, as spawnSync's timeout sends) and counts as refusing
   * @param env the shell's environment (its PATH finds the tools)
   */
  constructor(
    private readonly dir: string,
    private readonly toolTimeoutMs: number,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.child = spawn('sh', ['-c', ORACLES, 'oracles', dir], { stdio: ['pipe', 'pipe', 'inherit'], env });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.onLine(line));
    this.exit = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        clearTimeout(this.toolTimer);
        this.exited = `the oracles' shell exited (${code ?? signal})`;
        this.waiting?.reject(new Error(this.exited));
        resolve();
      }),
    );
  }

  /** Hands case `index` (its directory written) to the shell. */
  send(index: number): void {
    this.child.stdin!.write(`${index}\n`);
  }

  /** The tools' statuses for case `index`, once the shell has run them. */
  statuses(index: number): Promise<ToolStatuses> {
    const known = this.done.get(index);
    if (known) {
      this.done.delete(index);
      return Promise.resolve(known);
    }
    if (this.exited) return Promise.reject(new Error(this.exited));
    return new Promise((resolve, reject) => (this.waiting = { index, resolve, reject }));
  }

  /** Ends the shell (its stdin) and resolves once it has exited: waited for, its tools' CPU time counts as ours. */
  end(): Promise<void> {
    this.child.stdin!.end();
    return this.exit;
  }

  private onLine(line: string): void {
    clearTimeout(this.toolTimer);
    const [what, ...fields] = line.split(' ');
    if (what === 'run') {
      const [index, tool] = fields as [string, Tool];
      this.toolTimer = setTimeout(() => this.stop(index, tool), this.toolTimeoutMs);
      return;
    }
    const [index, list, extract, bsd] = fields as [string, string, string, string];
    const statuses = { list: Number(list), extract: extract === '-' ? undefined : Number(extract), bsd: Number(bsd) };
    if (this.waiting?.index === Number(index)) {
      this.waiting.resolve(statuses);
      this.waiting = undefined;
    } else this.done.set(Number(index), statuses);
  }

  /**
   * Stops `tool` on case `index` if it still runs. The shell starts it in the foreground, so its pid was never
   * printed: it is the shell's child whose command line is that tool's on that case (not the next tool, which the
   * shell may have started since, its `run` line not yet read).
   */
  private stop(index: string, tool: Tool): void {
    // The arguments, between NULs as /proc/<pid>/cmdline has them (after the program, or a script's interpreter too).
    const wanted = `\0${TOOL_ARGS[tool](`${this.dir}/${index}/case.tar.gz`).join('\0')}\0`;
    for (const pid of childrenOf(this.child.pid!)) {
      let command: string;
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      } catch {
        continue; // it ended meanwhile
      }
      if (!command.includes(wanted)) continue;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // it ended meanwhile
      }
    }
  }
}

/** The pids of a process's children, from /proc (Linux: GNU tar is what this fuzz needs anyway). */
function childrenOf(parent: number): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name) && procStat(name)?.ppid === parent).map(Number);
}
