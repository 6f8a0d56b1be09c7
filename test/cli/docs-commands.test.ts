// The docs are part of the CLI's contract: every `mme-deploy ...` command line in README.md, docs/, the image's and
// the examples' READMEs names a command that exists and only options that command has. A renamed flag fails here,
// not in a new user's terminal.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildProgram } from '../../lib/cli/program';
import { problemWith } from './grammar-check';
import type { CliIo } from '../../lib/cli/io';

const ROOT = join(__dirname, '..', '..');

function docFiles(): string[] {
  const inDir = (dir: string, depth = 0): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
      if (e.isDirectory()) return depth < 1 ? inDir(join(dir, e.name), depth + 1) : [];
      return e.name.endsWith('.md') ? [join(dir, e.name)] : [];
    });
  return ['README.md', 'DEVELOPERS.md', ...inDir('docs'), ...inDir('examples'), ...inDir('triton-image')];
}

/** Command lines in a markdown text: fenced blocks (with `\` continuations joined) and inline code spans. */
export function commandLines(markdown: string): { line: number; text: string }[] {
  const found: { line: number; text: string }[] = [];
  const lines = markdown.split('\n');
  let fence = false;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (/^\s*(```|~~~)/.test(raw)) {
      fence = !fence;
      continue;
    }
    if (fence) {
      let text = raw;
      const start = i;
      while (text.endsWith('\\') && i + 1 < lines.length) text = text.slice(0, -1) + ' ' + lines[++i]!.trim();
      found.push({ line: start + 1, text });
    } else {
      for (const m of raw.matchAll(/`([^`]+)`/g)) found.push({ line: i + 1, text: m[1]! });
    }
  }
  return found.flatMap(({ line, text }) =>
    shellParts(text)
      .map((part) => part.trim().replace(/^\$\s+/, ''))
      // `mme-deploy ...`, `npx mme-deploy ...`, `node dist/bin/mme-deploy.js ...` (a clone), with environment assignments
      // before it; not `npm install mme-deploy`.
      .map(
        (part) =>
          /^(?:[A-Z][A-Z0-9_]*=\S*\s+)*(?:(?:npx\s+)?mme-deploy|node\s+dist\/bin\/mme-deploy\.js)(?:\s+(.*))?$/.exec(part)?.[1] ??
          undefined,
      )
      .filter((rest): rest is string => rest !== undefined)
      .map((rest) => ({ line, text: rest })),
  );
}

/**
 * A line cut at `&&`, `||`, `|` and `;` outside quotes and brackets: `[-o a | -o b]` and `<archive \| dir>` in a
 * synopsis are alternatives, not pipes.
 */
function shellParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if ('[<('.includes(c)) {
      depth++;
    } else if (']>)'.includes(c)) {
      depth = Math.max(0, depth - 1);
    } else if (depth === 0 && (c === '|' || c === ';' || (c === '&' && text[i + 1] === '&'))) {
      parts.push(text.slice(start, i));
      if (text[i + 1] === c) i++;
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** Shell-like words: quotes group, `#` starts a comment, `...` placeholders are kept. */
function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.replace(/\s#.*$/, '').matchAll(/'[^']*'|"(?:[^"\\]|\\.)*"|\S+/g)) out.push(m[0]);
  return out;
}

const io: CliIo = { stdout: () => {}, stderr: () => {}, env: {}, cwd: ROOT } as unknown as CliIo;

describe('command lines in the docs', () => {
  const program = buildProgram(io, () => {});
  const files = docFiles();

  it('finds the quick start in README.md (the reader sees real command lines)', () => {
    const lines = commandLines(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((c) => c.text);
    expect(lines.some((l) => l.startsWith('package examples/sentiment_onnx'))).toBe(true);
    expect(files).toEqual(expect.arrayContaining(['docs/validate.md', 'triton-image/README.md']));
  });

  it('name only commands and options the CLI has', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const { line, text } of commandLines(readFileSync(join(ROOT, file), 'utf8'))) {
        checked++;
        const problem = problemWith(program, words(text));
        if (problem) problems.push(`${relative(ROOT, join(ROOT, file))}:${line}: ${problem} (mme-deploy ${text})`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it('show every command at least once', () => {
    const shown = new Set(
      files.flatMap((file) =>
        commandLines(readFileSync(join(ROOT, file), 'utf8')).map((c) => words(c.text).slice(0, 2).join(' ')),
      ),
    );
    const paths = program.commands.flatMap((c) =>
      c.commands.length > 0 ? c.commands.map((sub) => `${c.name()} ${sub.name()}`) : [c.name()],
    );
    const undocumented = paths.filter((path) => ![...shown].some((s) => s === path || s.startsWith(`${path} `)));
    expect(undocumented).toEqual([]);
  });

  it('the checker itself catches a wrong command, subcommand and option', () => {
    expect(problemWith(program, ['pakage', 'x'])).toBe('no command `pakage`');
    expect(problemWith(program, ['local', 'lod'])).toBe('`local` has no subcommand `lod`');
    expect(problemWith(program, ['push', 'x', '--versiond'])).toBe('`push` has no option --versiond');
    expect(problemWith(program, ['push', 'x', '--versioned', '--endpoint=e'])).toBeUndefined();
    expect(problemWith(program, ['validate', 'r', '[--jsn]'])).toBe('`validate` has no option --jsn');
    expect(commandLines('`mme-deploy package r [-o a | -o d/] --json && mme-deploy list | head`')).toEqual([
      { line: 1, text: 'package r [-o a | -o d/] --json' },
      { line: 1, text: 'list' },
    ]);
    const markdown = 'run\n```\nnpx mme-deploy validate \\\n  --mme repo\n```\nthen `mme-deploy graph r`; `npm i mme-deploy x`.';
    expect(commandLines(markdown)).toEqual([
      { line: 3, text: 'validate  --mme repo' },
      { line: 6, text: 'graph r' },
    ]);
  });
});
