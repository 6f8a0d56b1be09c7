// What several benchmarks share: the built files they run, their numeric options, their children's CPU time, and a
// command's wall time and peak RSS as GNU time measures them (the RSS of a child process is not visible from node
// itself).
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const GNU_TIME = '/usr/bin/time';

/** The absolute path of `relative` under dist/ (`npm run build` writes it); exits 2 saying so when it is missing. */
function built(relative) {
  const file = path.join(__dirname, '..', 'dist', relative);
  if (!fs.existsSync(file)) {
    console.error('dist/ is missing: run `npm run build` first.');
    process.exit(2);
  }
  return file;
}

/** `--name N` from the command line as a number, or `fallback` when it is absent. */
function numberOption(name, fallback) {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

/** Whether `--name` is on the command line. */
function flag(name) {
  return process.argv.slice(2).includes(name);
}

/** Exits with 2 and says why when GNU time is missing. */
function requireGnuTime() {
  if (!fs.existsSync(GNU_TIME)) {
    console.error(`${GNU_TIME} (GNU time) is needed to measure peak RSS.`);
    process.exit(2);
  }
}

/**
 * Runs `file args` under GNU time. Returns its wall seconds, peak RSS in KiB, exit status and stderr lines (GNU
 * time's own figures removed; its "Command exited with non-zero status" line too, the status is returned instead).
 */
function timeCommand(file, args, options = {}) {
  const run = spawnSync(GNU_TIME, ['-f', '%e %M', file, ...args], { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  const lines = run.stderr.trimEnd().split('\n');
  const [seconds, rssKib] = lines.pop().split(' ').map(Number);
  const exited = /Command exited with non-zero status (\d+)/.exec(lines.join('\n'));
  return {
    seconds,
    rssKib,
    status: exited ? Number(exited[1]) : run.status,
    stderr: lines.filter((l) => !l.startsWith('Command exited')),
  };
}

/**
 * The CPU seconds (user and system) of this process's children that have ended, from /proc/self/stat (cutime and
 * cstime, which hold the grandchildren each child waited for: validate's python); undefined off Linux.
 */
function childrenCpuSeconds() {
  let stat;
  try {
    stat = fs.readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // After the command name in parentheses (which may hold spaces), fields 3 on; cutime and cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // In clock ticks of USER_HZ, 100 per second on Linux (proc(5)).
  return (Number(fields[16 - 3]) + Number(fields[17 - 3])) / 100;
}

module.exports = { built, childrenCpuSeconds, flag, numberOption, requireGnuTime, timeCommand };
