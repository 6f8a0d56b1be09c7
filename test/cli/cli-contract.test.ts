// Slow: ~8 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// The contract README makes, command by command: one rule set for validate --mme and package, no raw control
// characters on a terminal, pasteable hints, exit codes 0/1/2/130, one JSON error object with --json, where package
// writes, progress only on a terminal, and the smaller habits of issue 13.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_WORKERS } from '../../lib/archive/tar-gz';
import { byteProgress, progressLine } from '../../lib/cli/progress';
import { escapeControl, escapeExcerpt } from '../../lib/cli/terminal-text';
import { main } from '../../lib/cli/program';
import type { CliIo } from '../../lib/cli/io';
import { shellCommand } from '../../lib/shell-quote';
import { cliCommand, ROOT, spawnCli, standIn } from './cli-process';
import { runCli } from './run-cli';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-contract-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const PYTHON_CONFIG =
  'name: "m"\nbackend: "python"\nmax_batch_size: 4\ninput [ { name: "text" data_type: TYPE_STRING dims: [ 1 ] } ]\n' +
  'output [ { name: "label" data_type: TYPE_STRING dims: [ 1 ] } ]\ninstance_group [ { kind: KIND_CPU } ]\n';

/** Writes `files` under `root` (a value of null makes a directory) and returns `root`. */
function write(root: string, files: Record<string, string | null>): string {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    if (content === null) {
      mkdirSync(full, { recursive: true });
    } else {
      mkdirSync(join(full, '..'), { recursive: true });
      writeFileSync(full, content);
    }
  }
  return root;
}

const repository = (name = 'repo') =>
  write(join(dir, name), { 'm/config.pbtxt': PYTHON_CONFIG, 'm/1/model.py': 'class TritonPythonModel:\n    pass\n' });

const hasControlBytes = (text: string) => [...Buffer.from(text, 'utf8')].some((b) => b < 0x20 && b !== 0x0a && b !== 0x09);

describe('one rule set: validate --mme refuses what package refuses, decided by the same walk', () => {
  it('refuses links leaving the repository, special files, hard links shared outside and names extractors refuse', async () => {
    const repo = repository();
    writeFileSync(join(dir, 'outside.bin'), 'shared');
    symlinkSync('/etc/hostname', join(repo, 'm/1/escape.txt'));
    execFileSync('mkfifo', [join(repo, 'm/1/pipe')]);
    linkSync(join(dir, 'outside.bin'), join(repo, 'm/1/shared.bin'));
    writeFileSync(join(repo, 'm/1/back\\slash'), 'x');
    const validate = await runCli(['validate', '--mme', repo, '--json']);
    const pack = await runCli(['package', repo, '-o', join(dir, 'x.tar.gz'), '--json']);
    expect([validate.code, pack.code]).toEqual([1, 1]);
    const codes = (run: { stdout: string }) =>
      (JSON.parse(run.stdout) as { diagnostics: { code: string; severity: string }[] }).diagnostics
        .filter((d) => d.severity === 'error')
        .map((d) => d.code)
        .sort();
    expect(codes(validate)).toEqual(['hardlink-outside', 'special-file', 'symlink-escape', 'unsafe-name']);
    expect(codes(pack)).toEqual(codes(validate));
    expect(existsSync(join(dir, 'x.tar.gz'))).toBe(false);
    // Without --mme, these are archive matters, not Triton's.
    expect((await runCli(['validate', repo])).code).toBe(0);
  });
});

describe('safe output: no raw control characters reach the terminal', () => {
  const ESC_CONFIG = 'name: "m"\nbackend: "python"\nparameters { key: "\x1b[2Jx" value: { string_value: "v" } } bogus_field: 1\n';

  it('escapes config lines, names and messages in validate and package, keeping the caret under its column', async () => {
    const repo = write(join(dir, 'repo'), { 'm/config.pbtxt': ESC_CONFIG, 'm/1/model.py': '', 'n\x1b]0;pwned\x07/1/': null });
    for (const args of [['validate', repo], ['package', repo, '-o', join(dir, 'x.tar.gz')]]) {
      const run = await runCli(args);
      expect(run.code).toBe(1);
      expect(hasControlBytes(run.stdout + run.stderr)).toBe(false);
      const lines = run.stdout.split('\n');
      const line = lines.findIndex((l) => l.includes('key: "\\x1b[2Jx"'));
      expect(lines[line + 1]!.indexOf('^')).toBe(lines[line]!.indexOf('bogus_field'));
      expect(run.stdout).toContain('n\\x1b]0;pwned\\x07:');
    }
  });

  it('escapes the config command\'s diagnostics, and a real process writes no ESC byte', async () => {
    const repo = write(join(dir, 'repo'), { 'm/config.pbtxt': ESC_CONFIG });
    const config = await runCli(['config', join(repo, 'm')]);
    expect(config.code).toBe(1);
    expect(config.stderr).toContain('\\x1b[2Jx');
    expect(hasControlBytes(config.stderr)).toBe(false);
    const real = spawnCli(['validate', repo]);
    expect(await real.exit).toBe(1);
    expect(real.outBytes().includes(0x1b)).toBe(false);
    expect(real.out()).toContain('\\x1b[2Jx');
  });

  it('escapes what a container answers, and names a web page instead of printing it', async () => {
    const archive = join(dir, 'm.tar.gz');
    expect((await runCli(['package', repository(), '-o', archive])).code).toBe(0);
    const container = await standIn((req, _body, res) => {
      if (req.method === 'GET') return void res.writeHead(404).end();
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad \x1b[31mred\x1b[0m model' }));
    });
    const web = await standIn((_req, _body, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html><html>dashboard</html>'),
    );
    try {
      const models = join(dir, 'models');
      const refused = await runCli(['local', 'load', archive, '--url', container.url, '--models-dir', models]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('bad \\x1b[31mred\\x1b[0m model');
      expect(hasControlBytes(refused.stderr)).toBe(false);
      const other = await runCli(['local', 'load', archive, '--url', web.url, '--models-dir', models]);
      expect(other.code).toBe(2);
      expect(other.stderr).toContain(`mme-deploy: ${web.url} is not a Triton container's SageMaker port: GET /models/`);
      expect(other.stderr).toContain('with a web page, where Triton answers JSON');
      expect(other.stderr).not.toContain('dashboard');
    } finally {
      await container.close();
      await web.close();
    }
  });

  it('escapes names quoted from a traffic file in plan\'s findings', async () => {
    writeFileSync(join(dir, 'trace.csv'), 'model,weight\nrepo.tar.gz,1\nev\x1b[8mil.tar.gz,1\n');
    const run = await runCli(['plan', repository(), '--traffic', 'trace.csv'], { cwd: dir });
    expect(run.stderr).toContain('ev\\x1b[8mil.tar.gz');
    expect(hasControlBytes(run.stdout + run.stderr)).toBe(false);
  });

  it('is one function: C0 as \\xNN, C1 and bidirectional overrides as \\uNNNN (still JSON), tab and newline kept', () => {
    expect(escapeControl('a\x1b[0m\x07\x7f\u009b\u202e\tb\n')).toBe('a\\x1b[0m\\x07\\x7f\\u009b\\u202e\tb\n');
    expect(JSON.parse(`"${escapeControl('\u009b\u202e')}"`)).toBe('\u009b\u202e');
    expect(escapeExcerpt('\x1bab x\n    ^')).toBe('\\x1bab x\n       ^');
  });
});

describe('pasteable hints', () => {
  /** The words bash makes of a printed command line (placeholders filled in). */
  const words = (line: string) =>
    execFileSync('bash', ['-c', `set -- ${line.replace(/<endpoint-name>/g, 'my-endpoint')}; printf '%s\\0' "$@"`])
      .toString()
      .split('\0')
      .slice(0, -1);

  it('quotes paths and carries --name into the printed push and invoke commands', async () => {
    const repo = repository("it's a repo");
    mkdirSync(join(dir, 'out dir'));
    const run = await runCli(['package', repo, '-o', 'out dir/file.tar.gz', '--name', 'custom.tar.gz'], { cwd: dir });
    expect(run.code).toBe(0);
    const push = run.stdout.split('\n').find((l) => l.trim().startsWith('mme-deploy push'))!;
    expect(words(push)).toEqual(['mme-deploy', 'push', 'out dir/file.tar.gz', '--name', 'custom.tar.gz', '--endpoint', 'my-endpoint']);
    const invoke = run.stdout.split('\n').find((l) => l.trim().startsWith('mme-deploy invoke'))!;
    expect(words(invoke)).toEqual([
      'mme-deploy', 'invoke', 'custom.tar.gz', '--endpoint', 'my-endpoint', '--model', 'out dir/file.tar.gz',
      '--text', 'text=<sentence>',
    ]);
  });

  it('quotes every word that needs it, and nothing else', () => {
    expect(shellCommand(['cp', "it's", 'a b', 'plain-name.tar.gz', ''])).toBe(`cp 'it'\\''s' 'a b' plain-name.tar.gz ''`);
  });
});

describe('exit codes: 0 ok, 1 invalid or failed, 2 usage or I/O', () => {
  it.each([
    [[], 'the bare command (help on stderr)'],
    [['local'], 'a bare command group (help on stderr)'],
    [['graph', 'REPO', '--ensemble', 'nope'], 'graph --ensemble naming no model'],
    [['plan', 'REPO', '--memory', 'nope.tar.gz=3'], 'plan --memory naming no planned model'],
    [['plan', 'REPO', '--instance-type', 'ml.g5.12xlarge'], 'plan on a multi-GPU instance type'],
    [['plan', 'REPO', '--instance-type', 'ml.nope'], 'plan on an unknown instance type'],
    [['plan', 'REPO', '--region', 'mars-1'], 'plan in a region that cannot exist'],
    [['local', 'unload', 'm.tar.gz', '--url', 'http://127.0.0.1:1'], 'local when no container answers'],
    [['local', 'load', 'missing.tar.gz', '--url', 'http://127.0.0.1:1'], 'local load of a missing archive'],
    [['list', '--s3', 's3://bucket/p/', '--profile', 'nosuch'], 'a profile that does not exist'],
    [['invoke', 'm.tar.gz', '--endpoint', 'e', '--shape', '2', '--text', 'text=hi'], 'invoke --shape that does not fit'],
  ])('exits 2 for %j (%s), with one mme-deploy: line and no report on stdout', async (args) => {
    const repo = repository();
    const run = await runCli(args.map((a) => (a === 'REPO' ? repo : a)), { cwd: dir, env: { HOME: dir } });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^(Usage: mme-deploy[^]*\n)?mme-deploy: \S/);
  });

  it('says what is wrong in the cases above', async () => {
    const repo = repository();
    const run = (args: string[]) => runCli(args, { cwd: dir, env: { HOME: dir } });
    expect((await run([])).stderr).toMatch(/^Usage: mme-deploy \[options\] \[command\][^]*mme-deploy: a command is required/);
    expect((await run(['local'])).stderr).toMatch(/^Usage: mme-deploy local/);
    expect((await run(['local', 'load', 'missing.tar.gz', '--url', 'http://127.0.0.1:1'])).stderr).toBe(
      'mme-deploy: missing.tar.gz: no such archive file (expected a .tar.gz made by mme-deploy package).\n',
    );
    expect((await run(['list', '--s3', 's3://bucket/p/', '--profile', 'nosuch'])).stderr).toMatch(
      new RegExp(
        /^mme-deploy: The AWS profile 'nosuch' does not exist in ~\/\.aws\/config and ~\/\.aws\/credentials\. /.source +
          /There are no profiles there\. Create it with `aws configure --profile nosuch`/.source,
      ),
    );
    expect((await run(['plan', repo, '--region', 'mars-1'])).stderr).toBe(
      "mme-deploy: --region: 'mars-1' is not an AWS region code; region codes look like us-east-1, eu-west-2 or ap-southeast-1.\n",
    );
    expect((await run(['invoke', 'm.tar.gz', '--endpoint', 'e', '--shape', '2,3', '--text', 'text=hi'])).stderr).toBe(
      "mme-deploy: Input 'text' has 1 value, but shape [2, 3] from --shape holds 6 (2 × 3): the dims must multiply to the number " +
        'of values. Fix --shape or the data.\n',
    );
  });
});

describe('--json: one JSON error object on stdout when a command fails', () => {
  it.each([
    ['validate', 'missing', '--json'],
    ['validate', 'REPO', '--bogus-flag', '--json'],
    ['config', 'missing', '--json'],
    ['package', 'missing', '--json'],
    ['plan', 'missing.tar.gz', '--json'],
    ['graph', 'REPO', '--ensemble', 'nope', '--json'],
    ['push', 'REPO', '--json'],
    ['list', '--json'],
    ['remove', 'm.tar.gz', '--json'],
    ['invoke', '--json'],
    ['status', '--json'],
    ['logs', '--json'],
    ['local', 'load', 'missing.tar.gz', '--json'],
    ['local', 'invoke', 'm.tar.gz', '--text', 'a=b', '--url', 'http://127.0.0.1:1', '--json'],
    ['local', 'unload', 'm.tar.gz', '--url', 'http://127.0.0.1:1', '--json'],
    ['local', 'list', '--url', 'http://127.0.0.1:1', '--json'],
  ])('%s %s', async (...args) => {
    const run = await runCli(args.map((a) => (a === 'REPO' ? repository() : a)), { cwd: dir });
    expect(run.code).toBe(2);
    const parsed = JSON.parse(run.stdout) as { error: { code: string; message: string } };
    expect(Object.keys(parsed)).toEqual(['error']);
    expect(parsed.error.code).toMatch(/^[A-Z_]+$/);
    expect(run.stderr.startsWith(`mme-deploy: ${parsed.error.message.split('\n')[0]}`)).toBe(true);
  });

  it('names a parse error of config --json as INVALID with the diagnostics', async () => {
    const repo = write(join(dir, 'repo'), { 'm/config.pbtxt': 'name: "m"\nbogus: 1\n' });
    const run = await runCli(['config', join(repo, 'm'), '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'INVALID', diagnostics: [{ code: 'unknown-field', line: 2 }] } });
  });
});

describe('package: where the archive goes', () => {
  it('writes DIR/<name>.tar.gz for -o DIR/ or an existing directory', async () => {
    const repo = repository();
    const slash = await runCli(['package', repo, '-o', 'new/'], { cwd: dir });
    expect(slash.code).toBe(2);
    expect(slash.stderr).toContain('the output directory');
    mkdirSync(join(dir, 'out'));
    expect((await runCli(['package', repo, '-o', 'out/'], { cwd: dir })).code).toBe(0);
    expect((await runCli(['package', repo, '-o', 'out', '--name', 'named.tar.gz'], { cwd: dir })).code).toBe(0);
    expect(readdirSync(join(dir, 'out')).sort()).toEqual(['named.tar.gz', 'repo.tar.gz']);
  });

  it('writes beside the repository, not into it, when run from inside it (package .)', async () => {
    const repo = repository();
    const run = await runCli(['package', '.'], { cwd: repo });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Wrote ../repo.tar.gz');
    expect(readdirSync(repo)).toEqual(['m']);
    expect(existsSync(join(dir, 'repo.tar.gz'))).toBe(true);
  });

  it('replaces an existing archive only with --force', async () => {
    const repo = repository();
    writeFileSync(join(dir, 'repo.tar.gz'), 'older');
    const refused = await runCli(['package', repo], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('mme-deploy: repo.tar.gz already exists; add --force to replace it, or choose another -o.\n');
    expect(readFileSync(join(dir, 'repo.tar.gz'), 'utf8')).toBe('older');
    expect((await runCli(['package', repo, '--force'], { cwd: dir })).code).toBe(0);
    expect(readFileSync(join(dir, 'repo.tar.gz')).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
  });
});

describe('package progress: on a terminal after about a second, never on a pipe', () => {
  it('draws bytes, rate and ETA on the status line after a second, and clears it', () => {
    const lines: string[] = [];
    let now = 0;
    const io = { status: (line: string) => lines.push(line) } as unknown as CliIo;
    const progress = byteProgress(io, 'packing', () => now);
    progress.update(100 * 1024 ** 2, 1024 ** 3);
    now = 2000;
    progress.update(256 * 1024 ** 2, 1024 ** 3);
    progress.finish();
    expect(lines).toEqual(['packing  256 MiB of 1.0 GiB (25 %)  128 MiB/s ETA 6 s', '']);
    expect(progressLine('packing', 0, 10, 0)).toBe('packing  0 B of 10 B (0 %)  0 B/s');
  });

  it('prints nothing of the kind without a terminal, however long it runs', () => {
    let now = 0;
    let written = '';
    const io = { stdout: (s: string) => (written += s), stderr: (s: string) => (written += s) } as unknown as CliIo;
    const progress = byteProgress(io, 'packing', () => (now += 5000));
    for (let i = 1; i <= 5; i++) progress.update(i, 5);
    progress.finish();
    expect(written).toBe('');
  });

  it('shows on a real terminal (script) and not on a pipe', async () => {
    // 8 MiB packs in milliseconds; the CLI runs with a clock 1,000 times faster (test/cli/fast-clock.cjs), so to it
    // the packing lasts seconds, as a large archive's would: past the one-second threshold, with several redraws.
    const repo = repository();
    writeFileSync(join(repo, 'm/1/weights.bin'), '');
    truncateSync(join(repo, 'm/1/weights.bin'), 8 * 1024 ** 2);
    const fastClock = ['--require', join(__dirname, 'fast-clock.cjs')];
    const bin = shellCommand(cliCommand(fastClock));
    // The piped run goes on while the terminal one runs (spawnSync blocks this process, not that one).
    const piped = spawnCli(['package', 'repo', '-o', 'pipe.tar.gz'], { cwd: dir, nodeOptions: fastClock });
    const terminal = spawnSync('script', ['-qfc', `${bin} package repo -o tty.tar.gz`, '/dev/null'], { cwd: dir, encoding: 'utf8' });
    expect(terminal.status).toBe(0);
    expect(terminal.stdout).toMatch(/\rpacking {2}[\d.]+ [KMG]?i?B of 8\.0 MiB \(\d+ %\) {2}[\d.]+ [KMG]?i?B\/s ETA \d+ s\x1b\[K/);
    // The line is cleared (a bare \r ESC[K) before the result is printed.
    const afterClear = terminal.stdout.slice(terminal.stdout.lastIndexOf('\r\x1b[K'));
    expect(afterClear).toContain('Wrote tty.tar.gz');
    expect(afterClear).not.toContain('packing');
    expect(await piped.exit).toBe(0);
    expect(piped.err()).toBe('');
    expect(piped.out()).not.toMatch(/packing|\r/);
  }, 60_000);
});

describe('help texts and smaller habits', () => {
  const help = async (...args: string[]) => {
    let out = '';
    const io: CliIo = { stdout: (s) => void (out += s), stderr: () => undefined, isTTY: false, env: {}, cwd: dir };
    expect(await main([...args, '--help'], io)).toBe(0);
    return out.replace(/\s+/g, ' ');
  };

  it('mark required options and show real defaults', async () => {
    expect(await help('config')).not.toContain('(default: true)');
    const plan = await help('plan');
    expect(plan).not.toContain('(default: [])');
    expect(plan).toContain('(default: download=100,extract=150,load=500,per-model=1)');
    expect(plan).toContain('(repeatable) (default: estimated from the weight files)');
    const invoke = await help('invoke');
    expect(invoke).toContain('--endpoint <name> the multi-model endpoint (required)');
    expect(invoke).toContain('e.g. model.tar.gz (required)');
    for (const command of ['status', 'logs']) expect(await help(command)).toContain('the multi-model endpoint (required)');
    expect(await help('push')).toContain('(this or --s3 is required)');
  });

  it('local load names a missing archive before looking for a container', async () => {
    let requests = 0;
    const container = await standIn((_req, _body, res) => {
      requests += 1;
      res.writeHead(404).end();
    });
    try {
      const run = await runCli(['local', 'load', 'missing.tar.gz', '--url', container.url], { cwd: dir });
      expect(run.code).toBe(2);
      expect(requests).toBe(0);
    } finally {
      await container.close();
    }
  });

  it('plan prints one minus sign and binary units, as package does', async () => {
    const repo = repository();
    writeFileSync(join(repo, 'm/1/weights.bin'), Buffer.alloc(3000));
    const run = await runCli(['plan', repo, '--price', '1'], { cwd: dir });
    expect(run.code).toBe(0);
    // Sizes of files in binary units; disk sizes stay in GB, as AWS specifies them and --disk-gb takes them, and the
    // assumptions quote --cold-start's MB/s.
    expect(run.stdout).not.toMatch(/[\u2212\u2013]/);
    expect(run.stdout.split('Assumptions')[0]).not.toMatch(/ kB| MB/);
    expect(run.stdout).toMatch(/\d+(\.\d)? KiB/);
    expect(run.stdout).toContain('MiB usable - 1024 MiB reserved');
  });

  it('README states the compression worker cap the packer uses', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).not.toContain('every core');
    expect(readme).toContain(`compression runs on up to ${MAX_WORKERS} cores`);
  });

  it('silences the AWS SDK NodeVersionSupportWarning on every AWS command, status included (real processes)', async () => {
    const sdk = await standIn((_req, _body, res) =>
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' }).end(
        JSON.stringify({ __type: 'ValidationException', message: 'Could not find endpoint "e".' }),
      ),
    );
    try {
      const env = { AWS_ACCESS_KEY_ID: 'AKIDTEST', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: sdk.url };
      const commands = [
        ['status', '--endpoint', 'e'],
        ['logs', '--endpoint', 'e'],
        ['list', '--endpoint', 'e'],
        ['invoke', 'm.tar.gz', '--endpoint', 'e', '--text', 'text=hi'],
      ];
      const runs = commands.map((args) => spawnCli(args, { env }));
      // The control, run beside them: on this Node the SDK does print it when nothing silences it. Any client's
      // constructor warns (the check is in @aws-sdk/core, once per process); SageMaker Runtime's, the client invoke
      // uses, loads in half the time of SageMaker's (0.4 s of CPU, not 0.7).
      const control = spawn(
        process.execPath,
        ['-e', "new (require('@aws-sdk/client-sagemaker-runtime').SageMakerRuntimeClient)({ region: 'us-east-1' })"],
        { cwd: ROOT, env: { PATH: process.env.PATH } },
      );
      let controlErr = '';
      control.stderr.on('data', (d: Buffer) => (controlErr += d.toString('utf8')));
      const controlDone = new Promise((resolve) => control.on('close', resolve));
      for (const run of runs) {
        expect(await run.exit).toBe(1);
        expect(run.err()).toMatch(/^mme-deploy: /);
        expect(run.err()).not.toContain('NodeVersionSupportWarning');
      }
      await controlDone;
      if (Number(process.versions.node.split('.')[0]) < 22) expect(controlErr).toContain('NodeVersionSupportWarning');
    } finally {
      await sdk.close();
    }
  });
});
