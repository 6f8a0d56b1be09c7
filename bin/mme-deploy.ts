#!/usr/bin/env node
// CLI entry: parses nothing itself; lib/cli does the work and returns the exit code.
import { main } from '../lib/cli/program';
import { processIo } from '../lib/cli/io';

// The AWS SDK warns on Node 20 that its releases after January 2027 will need Node 22. Users of this CLI cannot act on
// that (the SDK versions come with mme-deploy), so the CLI silences it unless the variable is already set.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mme-deploy: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
