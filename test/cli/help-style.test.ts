// Every command's --help reads one way: defaults and environment variables written by one helper (help-style.ts),
// an "Examples:" and an "Exit codes:" section generated from one table (help-examples.ts), the global --quiet and
// --version; every example parses with the real grammar. Also --quiet itself, and the TargetModel of `invoke` given
// as in `remove` and `local invoke` (its first argument), the old --target-model still taken.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, CommanderError } from 'commander';
import { buildProgram } from '../../lib/cli/program';
import type { CliIo } from '../../lib/cli/io';
import { COMMAND_HELP } from '../../lib/cli/help-examples';
import { commandPath, described, helpSections } from '../../lib/cli/help-style';
import { ExitCode } from '../../lib/cli/exit-codes';
import { problemWith } from './grammar-check';
import { runCli } from './run-cli';

const ROOT = join(__dirname, '..', '..');

function program(): { program: Command; out: () => string } {
  let out = '';
  const io = { stdout: (s: string) => (out += s), stderr: (s: string) => (out += s), isTTY: false, env: {}, cwd: ROOT } as CliIo;
  return { program: buildProgram(io, () => {}), out: () => out };
}

function allCommands(root: Command): Command[] {
  return [root, ...root.commands.flatMap(allCommands)];
}

/** What `mme-deploy <path> --help` prints, the sections added after the options included. */
function helpOf(command: Command, out: () => string): string {
  const before = out().length;
  command.outputHelp();
  return out().slice(before);
}

/** Shell-like words: quotes group and are removed (`text="great movie"` is one word), as bash would pass them. */
function shellWords(line: string): string[] {
  return [...line.matchAll(/(?:[^\s'"]+|'[^']*'|"[^"]*")+/g)].map((m) => m[0].replace(/'([^']*)'|"([^"]*)"/g, '$1$2'));
}

/** An environment variable's name, as help may write it only in `(env: ...)`. */
const ENV_NAME = /\b(?:AWS|MME_DEPLOY|SAGEMAKER)_[A-Z0-9_]+\b/;
/** The one shape of a description: text, then optionally ` (env: ...)`, then optionally ` (default: ...)`. */
const SHAPE = /^(?<text>.*?)(?: \(env: (?<env>[^()]+)\))?(?: \(default: (?<value>.+)\))?$/s;

describe('--help, every command', () => {
  const { program: root, out } = program();
  const commands = allCommands(root);

  it('has an entry in the examples table for every command, and none for a command that is gone', () => {
    expect(Object.keys(COMMAND_HELP).sort()).toEqual(commands.map(commandPath).sort());
    expect(commands.length).toBeGreaterThan(15);
  });

  it.each(commands.map((c) => [commandPath(c) || '(mme-deploy)', c] as const))(
    '%s: Examples, Exit codes and the global options',
    (_path, command) => {
      const help = helpOf(command, out);
      const table = COMMAND_HELP[commandPath(command)]!;
      expect(help).toContain(helpSections(table));
      expect(help).toMatch(/\nExamples:\n {2}# .+\n {2}mme-deploy \S/);
      const codes = [...help.slice(help.indexOf('Exit codes:')).matchAll(/^ {2}(\d+) /gm)].map((m) => Number(m[1]));
      expect(codes).toEqual(expect.arrayContaining([ExitCode.Ok, ExitCode.Failure, ExitCode.Usage]));
      for (const code of codes) expect(Object.values(ExitCode)).toContain(code);
      if (table.cancellable) expect(codes).toContain(ExitCode.Interrupted);
      expect(help).toMatch(/-q, --quiet +print no progress and no notes on stderr/);
      expect(help).toMatch(/-v, --version +print the version/);
      // Commander's own suffixes are off: a default is written once, the house way.
      expect(help).not.toMatch(/\(default: "|\(choices: |\$[A-Z]/);
    },
  );

  it.each(commands.map((c) => [commandPath(c) || '(mme-deploy)', c] as const))(
    '%s: every option and argument states env and default one way',
    (_path, command) => {
      const described = [
        ...command.options.map((o) => ({ name: o.long ?? o.short!, description: o.description, value: o.defaultValue, negate: o.negate })),
        ...command.registeredArguments.map((a) => ({ name: a.name(), description: a.description, value: a.defaultValue, negate: false })),
      ];
      for (const { name, description, value, negate } of described) {
        const groups = SHAPE.exec(description)!.groups!;
        const where = `${commandPath(command)} ${name}: ${description}`;
        expect([where, groups.text]).not.toEqual([where, expect.stringMatching(/default|\benv\b|\$[A-Z]/i)]);
        expect([where, groups.text]).not.toEqual([where, expect.stringMatching(ENV_NAME)]);
        for (const env of groups.env?.split(', ') ?? []) expect([where, env]).toEqual([where, expect.stringMatching(/^[A-Z][A-Z0-9_]*$/)]);
        // A default the parser applies is the one the help states.
        if (value !== undefined && !negate && typeof value !== 'boolean') expect([where, groups.value]).toEqual([where, String(value)]);
      }
    },
  );

  it('the helper writes env before the default, and nothing when there is neither', () => {
    expect(described('AWS region', { env: 'AWS_REGION', default: "the profile's region" })).toBe(
      "AWS region (env: AWS_REGION) (default: the profile's region)",
    );
    expect(described('price', { env: ['A_B', 'C_D'] })).toBe('price (env: A_B, C_D)');
    expect(described('plain')).toBe('plain');
    expect(SHAPE.exec(described('x', { env: 'AWS_REGION', default: 'y (z)' }))!.groups).toMatchObject({
      text: 'x',
      env: 'AWS_REGION',
      value: 'y (z)',
    });
  });
});

describe('the examples in --help', () => {
  const examples = Object.entries(COMMAND_HELP).flatMap(([path, help]) => help.examples.map(([line]) => [path, line] as const));

  it.each(examples)('%s: `mme-deploy %s` parses with the real grammar', async (path, line) => {
    const words = shellWords(line);
    // Listed under the command it runs (the program's own examples may run any).
    if (path !== '') expect(words.slice(0, path.split(' ').length).join(' ')).toBe(path);
    const { program: root } = program();
    expect(problemWith(root, words)).toBeUndefined();
    // Parsed as a user's command line, with every action replaced by nothing: a missing argument, an unknown option or
    // a bad choice throws here.
    for (const command of allCommands(root)) if (command.commands.length === 0) command.action(() => undefined);
    let error: unknown;
    try {
      await root.parseAsync(words, { from: 'user' });
    } catch (err) {
      error = err;
    }
    if (error instanceof CommanderError && error.code === 'commander.helpDisplayed') error = undefined;
    expect(error).toBeUndefined();
  });

  it('the check fails on an example that does not parse', async () => {
    const { program: root } = program();
    for (const command of allCommands(root)) if (command.commands.length === 0) command.action(() => undefined);
    await expect(root.parseAsync(shellWords('graph models/ --format svg'), { from: 'user' })).rejects.toThrow(/Allowed choices/);
    expect(shellWords(`invoke m --text text="great movie" --text 'a b'`)).toEqual([
      'invoke', 'm', '--text', 'text=great movie', '--text', 'a b',
    ]);
  });
});

describe('--quiet', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mme-quiet-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const planArgs = () => ['plan', join(ROOT, 'examples', 'sentiment_onnx'), '--csv', 'curve.csv', '--force'];
  const plan = (...flags: string[]) => runCli([...planArgs(), ...flags], { cwd: dir });

  it('leaves out the notes on stderr, before or after the command; stdout is the same', async () => {
    const loud = await plan();
    expect(loud.code).toBe(0);
    expect(loud.stderr).toContain('wrote the instance-count curve to curve.csv');
    for (const quiet of [await plan('--quiet'), await runCli(['-q', ...planArgs()], { cwd: dir })]) {
      expect(quiet).toEqual({ code: 0, stdout: loud.stdout, stderr: '' });
    }
  });

  it('still prints errors', async () => {
    expect(await runCli(['--quiet', 'validate', 'no-such-dir'], { cwd: dir })).toEqual({
      code: 2,
      stdout: '',
      stderr: expect.stringMatching(/^mme-deploy: .*no-such-dir.*\n$/),
    });
  });
});

describe('the TargetModel of invoke, remove and local invoke', () => {
  it('is the first argument of each', () => {
    const { program: root } = program();
    const find = (path: string) => allCommands(root).find((c) => commandPath(c) === path)!;
    for (const path of ['invoke', 'remove', 'local invoke', 'local unload']) {
      expect([path, find(path).registeredArguments[0]?.name()]).toEqual([path, 'target-model']);
    }
    expect(find('invoke').options.find((o) => o.long === '--target-model')?.hidden).toBe(true);
  });

  it('invoke still takes --target-model, with a note saying the new way (left out by --quiet)', async () => {
    const old = await runCli(['invoke', '--target-model', 'm.tar.gz', '--text', 'text=hi']);
    expect(old).toEqual({
      code: 2,
      stdout: '',
      stderr: 'note: --target-model is deprecated; give the TargetModel first: mme-deploy invoke m.tar.gz ...\n' +
        'mme-deploy: Which endpoint? Give --endpoint NAME.\n',
    });
    const quiet = await runCli(['-q', 'invoke', '--target-model', 'm.tar.gz']);
    expect(quiet.stderr).toBe('mme-deploy: Which endpoint? Give --endpoint NAME.\n');
  });

  it('invoke refuses two different TargetModels, and asks for one when none is given', async () => {
    expect(await runCli(['invoke', 'a.tar.gz', '--target-model', 'b.tar.gz', '--endpoint', 'e'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "mme-deploy: two TargetModels: 'a.tar.gz' and --target-model 'b.tar.gz'; give one, as the first argument\n",
    });
    expect((await runCli(['invoke', '--endpoint', 'e'])).stderr).toBe(
      'mme-deploy: Which model? Give the TargetModel first: mme-deploy invoke NAME.tar.gz --endpoint e ... ' +
        '(see `mme-deploy list --endpoint e`).\n',
    );
  });
});
