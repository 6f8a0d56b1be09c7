// `--help` and the help of every live-endpoint command must not load the AWS SDK (startup stays fast).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

it('does not load @aws-sdk, cli-progress or zod for --help of push, list, remove, invoke, status and logs', () => {
  const script = `
    const { main } = require('./lib/cli/program');
    const io = { stdout() {}, stderr() {}, isTTY: false, env: process.env, cwd: process.cwd() };
    (async () => {
      for (const command of ['push', 'list', 'remove', 'invoke', 'status', 'logs']) await main([command, '--help'], io);
      await main(['--help'], io);
      const loaded = Object.keys(require.cache).filter((p) => /node_modules\\/(@aws-sdk|cli-progress|zod)\\//.test(p));
      process.stdout.write(JSON.stringify(loaded));
    })();
  `;
  const output = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  expect(JSON.parse(output)).toEqual([]);
});
