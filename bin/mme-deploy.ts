#!/usr/bin/env node
// CLI entry: parses nothing itself; lib/cli does the work and returns the exit code.
import { main } from '../lib/cli/program';
import { processIo } from '../lib/cli/io';

main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mme-deploy: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
