#!/usr/bin/env node
// CLI entry: parses nothing itself; lib/cli does the work and returns the exit code.
import { main } from '../lib/cli/program';
import { processIo } from '../lib/cli/io';
import { exitOnSignalsOutsideCommands } from '../lib/cli/signals';

// Before anything else: Ctrl-C, SIGTERM or SIGHUP while the command loads exits 130 like any interruption.
exitOnSignalsOutsideCommands();

// The AWS SDK warns on Node 20 that its releases after January 2027 will need Node 22. Users of this CLI cannot act on
// that (the SDK versions come with mme-deploy), so the CLI silences it unless the variable is already set.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// A copy of the SDK that predates the variable would warn anyway: while it is 'true', that one warning is dropped too.
const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;
process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
  const silenced = process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED === 'true';
  if (silenced && String(warning instanceof Error ? warning.message : warning).startsWith('NodeVersionSupportWarning')) return;
  emitWarning(warning, ...rest);
}) as typeof process.emitWarning;

main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mme-deploy: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
