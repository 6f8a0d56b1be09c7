// How `--help` reads, written once: how an option or argument states the environment variables it reads and its
// default, and each command's "Examples:" and "Exit codes:" sections, generated from one table per command
// (help-examples.ts) and the exit codes of exit-codes.ts. Light on purpose: program.ts imports it at startup.

import type { Command } from 'commander';
import { ExitCode } from './exit-codes';

export interface HelpFacts {
  /** What happens when the option is left out, in words or as the value: `ml.g4dn.xlarge`, `every TargetModel`. */
  readonly default?: string;
  /** Environment variables read when the option is left out, first one first. */
  readonly env?: string | readonly string[];
}

/**
 * The one way an option or argument description ends: `<text> (env: A, B) (default: X)`. Commander's own suffixes
 * (`(default: "6")`, `(choices: ...)`) are switched off (`helpConfiguration`), so a default a parser applies is stated
 * here too; test/cli/help-style.test.ts checks the two agree.
 */
export function described(text: string, facts: HelpFacts = {}): string {
  const env = facts.env === undefined ? [] : typeof facts.env === 'string' ? [facts.env] : facts.env;
  return `${text}${env.length > 0 ? ` (env: ${env.join(', ')})` : ''}${facts.default !== undefined ? ` (default: ${facts.default})` : ''}`;
}

/**
 * Commander's help configuration for every command: descriptions as `described` wrote them, and the global options
 * (`--quiet`, `--version`) shown in each command's help.
 */
export const helpConfiguration = {
  showGlobalOptions: true,
  optionDescription: (option: { description: string }) => option.description,
  argumentDescription: (argument: { description: string }) => argument.description,
};

/** What one command's help shows after its options. */
export interface CommandHelp {
  /** Complete command lines (after `mme-deploy`) and what each does; each must parse (test/cli/help-style.test.ts). */
  readonly examples: readonly (readonly [command: string, what: string])[];
  /** What exit code 1 means for this command. */
  readonly failure: string;
  /** Whether Ctrl-C or SIGTERM stops it with 130 (the commands run under withCancellation). */
  readonly cancellable?: boolean;
}

/** What each exit code means in general (lib/cli/exit-codes.ts); a command's table says what 1 means for it. */
const EXIT_CODE_MEANING: Record<number, string> = {
  [ExitCode.Ok]: 'done',
  [ExitCode.Failure]: 'the input was found invalid, or the operation failed',
  [ExitCode.Usage]: 'usage or I/O error: a bad flag, a missing or unreadable path, AWS or a container not reachable',
  [ExitCode.Interrupted]: 'cancelled (Ctrl-C, SIGTERM)',
};

/** The "Examples:" and "Exit codes:" sections of one command's help. */
export function helpSections(help: CommandHelp): string {
  // What it does as a shell comment, then the command line: both paste into a shell as they are.
  const examples = help.examples.map(([command, what]) => `  # ${what}\n  mme-deploy ${command}`);
  const codes: [number, string][] = [[ExitCode.Ok, EXIT_CODE_MEANING[ExitCode.Ok]!]];
  codes.push([ExitCode.Failure, help.failure]);
  codes.push([ExitCode.Usage, EXIT_CODE_MEANING[ExitCode.Usage]!]);
  if (help.cancellable) codes.push([ExitCode.Interrupted, EXIT_CODE_MEANING[ExitCode.Interrupted]!]);
  const exitCodes = codes.map(([code, what]) => `  ${String(code).padEnd(3)}  ${what}`);
  return `\nExamples:\n${examples.join('\n')}\n\nExit codes:\n${exitCodes.join('\n')}\n`;
}

/** `local load` for the `load` command under `local`; '' for the program itself. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Adds the Examples and Exit codes sections to `command` and every command below it, from `table` by command path.
 * A command missing from the table is a programming error, found by any test that builds the program.
 */
export function addHelpSections(command: Command, table: Readonly<Record<string, CommandHelp>>): void {
  const path = commandPath(command);
  const help = table[path];
  if (!help) throw new Error(`help-examples.ts has no entry for \`${path || 'mme-deploy'}\``);
  command.addHelpText('after', () => helpSections(help));
  for (const sub of command.commands) addHelpSections(sub, table);
}

export { EXIT_CODE_MEANING };
