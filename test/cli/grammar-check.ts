// Whether a command line (the words after `mme-deploy`) names only commands and options the grammar has: the check
// the docs' command lines (docs-commands.test.ts) and the help's examples (help-style.test.ts) share.

import type { Command } from 'commander';

/** What is wrong with one command line (the words after `mme-deploy`), or undefined when the grammar has it all. */
export function problemWith(program: Command, words: readonly string[]): string | undefined {
  let command = program;
  let i = 0;
  // Walk down the subcommands: `local load`, `push`, ...
  for (; i < words.length; i++) {
    const sub = command.commands.find((c) => c.name() === words[i] || c.aliases().includes(words[i]!));
    if (!sub) break;
    command = sub;
  }
  if (command === program) {
    const first = words[0];
    // `mme-deploy --help`, `--version`, or a placeholder such as <command>.
    if (first === undefined || first.startsWith('-') || /^[<[]/.test(first)) return undefined;
    return `no command \`${first}\``;
  }
  if (command.commands.length > 0 && i < words.length && !words[i]!.startsWith('-') && !/^[<[.]/.test(words[i]!)) {
    return `\`${command.name()}\` has no subcommand \`${words[i]}\``;
  }
  const known = new Set(['--help', '-h']);
  for (const option of command.options) {
    if (option.long) known.add(option.long);
    if (option.short) known.add(option.short);
    // `--no-binary` and `--binary` both name a negatable option.
    if (option.negate && option.long) known.add(option.long.replace(/^--no-/, '--'));
  }
  for (const word of words.slice(i)) {
    if (word === '--') break;
    // `[--json]` and `[-o out.tar.gz` in a synopsis are options too.
    const flag = /^(--?[A-Za-z][\w-]*)(?:=.*)?$/.exec(word.replace(/^\[+/, '').replace(/\]+$/, ''))?.[1];
    if (flag && !known.has(flag)) return `\`${command.name()}\` has no option ${flag}`;
  }
  return undefined;
}
