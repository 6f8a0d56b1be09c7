// The command-line grammar: every command, its options and its help. Actions load their module lazily so that
// `--help` and light commands never pay for the AWS SDK, aws-cdk-lib or zod.

import { Command, CommanderError, Option } from 'commander';
import { CliError, CliIo, ExitCode } from './io';

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = ExitCode.Ok;
  const setExit = (code: number) => {
    exitCode = code;
  };
  const program = buildProgram(io, setExit);
  try {
    await program.parseAsync(argv as string[], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
        return ExitCode.Ok;
      }
      // Commander has already printed its message through configureOutput.
      return ExitCode.Usage;
    }
    if (err instanceof CliError) {
      io.stderr(`mme-deploy: ${err.message}\n`);
      return err.exitCode;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.stderr(`mme-deploy: internal error: ${message}\n`);
    if (io.env.MME_DEPLOY_DEBUG && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`);
    else io.stderr('Run again with MME_DEPLOY_DEBUG=1 for details, and please report it.\n');
    return ExitCode.Failure;
  }
  return exitCode;
}

type SetExit = (code: number) => void;

function buildProgram(io: CliIo, setExit: SetExit): Command {
  const program = new Command('mme-deploy')
    .description(
      'Validate, package, deploy and operate NVIDIA Triton ensembles on Amazon SageMaker GPU multi-model endpoints.',
    )
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      outputError: (s, write) => write(s),
    })
    .exitOverride();

  program
    .command('validate')
    .description('Check a Triton model repository (or one model directory) offline with Triton\'s own rules.')
    .argument('<path>', 'a model repository (its subdirectories are models) or one model directory')
    .option('--json', 'print one JSON report on stdout')
    .option('--mme', 'also apply the SageMaker multi-model endpoint archive rules')
    .action(async (path: string, options: { json?: boolean; mme?: boolean }) => {
      const { runValidate } = await import('./validate');
      setExit(await runValidate(path, options, io));
    });

  program
    .command('config')
    .description('Print a model\'s config.pbtxt as parsed (no auto-complete).')
    .argument('<model-dir>', 'a model directory holding config.pbtxt, or the config file itself')
    .addOption(new Option('--json', 'print JSON (the default and only format)').default(true))
    .action(async (path: string) => {
      const { runConfig } = await import('./config');
      setExit(await runConfig(path, io));
    });

  for (const command of program.commands) {
    command.exitOverride().configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
    });
  }
  return program;
}

function packageVersion(): string {
  // The same code runs from lib/ (tests) and dist/lib/ (the installed CLI): walk up to our package.json.
  const { existsSync, readFileSync } = require('node:fs') as typeof import('node:fs');
  const { dirname, join } = require('node:path') as typeof import('node:path');
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mme-deploy' && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
}
