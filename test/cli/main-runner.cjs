// Started by a test as a real process (test/cli/cli-process.ts, runMainInProcess): runs the CLI's main, as built in
// dist/ (the function the bundled CLI's entry calls), once per argument vector given as JSON in argv[2], one after the
// other in this one process, each with its own captured stdout and stderr, and prints their results as one JSON
// array. A vector given as {"cwd", "args"} runs in that directory (the process changes into it first), as a process
// started there would. For tables of commands whose process matters only as the user it runs as (an unprivileged
// one), not for its exit or its signals: one node start and one load of the modules for all of them. A rejection of
// main is reported as the entry reports it (bin/mme-deploy.ts): an internal error, exit code 1.
'use strict';
const { join } = require('node:path');

// As the entry does: the AWS SDK's Node version warning is silenced (nothing else may reach this process's stderr).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { main } = require(join(__dirname, '..', '..', 'dist', 'lib', 'cli', 'program.js'));

async function run(args) {
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    isTTY: false,
    env: process.env,
    cwd: process.cwd(),
  };
  let code;
  try {
    code = await main(args, io);
  } catch (err) {
    stderr += `mme-deploy: internal error: ${err instanceof Error ? err.message : String(err)}\n`;
    code = 1;
  }
  return { code, stdout, stderr };
}

(async () => {
  const results = [];
  for (const vector of JSON.parse(process.argv[2])) {
    if (Array.isArray(vector)) {
      results.push(await run(vector));
    } else {
      process.chdir(vector.cwd);
      results.push(await run(vector.args));
    }
  }
  process.stdout.write(JSON.stringify(results));
})();
