// The library's layers (docs/architecture.md): each folder of lib/ imports only folders of lower layers and itself,
// so there is no cycle and the bottom modules can be read alone. Checked on the import statements of the sources.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LIB = join(__dirname, '..', 'lib');

/**
 * Lowest first; a part imports only parts of lower layers, never one beside it. A part of lib/ is the first path
 * segment below lib/: a folder, or a file at the top.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['diagnostics', 'errors.ts', 'format-bytes.ts', 'paths.ts', 'shell-quote.ts'],
  ['archive', 'catalog', 'config', 'model-files', 'python-auto-complete'],
  ['kserve', 'logs', 'repository'],
  ['aws', 'bundle', 'local', 'plan'],
  ['measure', 'push'],
  ['cli', 'index.ts'],
];

const layerOf = new Map(LAYERS.flatMap((names, level) => names.map((name) => [name, level] as const)));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The part of lib/ a source or import target belongs to (`config`, `errors.ts`), or undefined outside lib/. */
function partOf(path: string): string | undefined {
  const rel = relative(LIB, path);
  if (rel.startsWith('..')) return undefined;
  const segments = rel.split('/');
  if (segments.length > 1 || statSync(path, { throwIfNoEntry: false })?.isDirectory()) return segments[0];
  return rel.endsWith('.ts') ? rel : `${rel}.ts`;
}

/** The parts of lib/ a source imports: static imports, `export ... from` and `await import(...)`. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.flatMap((spec) => partOf(resolve(dirname(file), spec)) ?? []);
}

describe('library layers', () => {
  const files = sources(LIB);

  it('places every part of lib/ in a layer', () => {
    const parts = new Set(files.map((f) => partOf(f)!));
    expect([...parts].filter((p) => !layerOf.has(p))).toEqual([]);
  });

  it('imports only from lower layers or from the same part', () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = partOf(file)!;
      for (const to of importsOf(file)) {
        if (to === from) continue;
        const ok = layerOf.has(to) && layerOf.get(to)! < layerOf.get(from)!;
        if (!ok) violations.push(`${relative(LIB, file)} imports ${to}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('leaves process signals and exits to the CLI: no other module listens on or exits the process', () => {
    const offenders = files
      .filter((file) => partOf(file) !== 'cli')
      .filter((file) => /process\.(on|once|addListener|prependListener|exit)\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(LIB, file));
    expect(offenders).toEqual([]);
  });

  it('builds every Diagnostic with diagnostic(): no module writes the object by hand', () => {
    // A hand-written literal is how faults came to lack their caret excerpt (issue 16.1). The local target's findings
    // are another type (`note` severity, no file), so target-environment.ts is not a Diagnostic builder.
    const offenders = files
      .filter((file) => partOf(file) !== 'diagnostics' && !file.endsWith('target-environment.ts'))
      .filter((file) => /severity:\s*'(?:error|warning)'\s*,/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(LIB, file));
    expect(offenders).toEqual([]);
  });

  it('is drawn in DEVELOPERS.md and docs/architecture.md: every part of lib/ is named in both', () => {
    const developers = readFileSync(join(LIB, '..', 'DEVELOPERS.md'), 'utf8');
    const architecture = readFileSync(join(LIB, '..', 'docs', 'architecture.md'), 'utf8');
    const parts = [...new Set(files.map((f) => partOf(f)!))].filter((p) => p !== 'index.ts');
    const missing = parts.flatMap((p) => [
      ...(developers.includes(`lib/${p}`) ? [] : [`DEVELOPERS.md lacks lib/${p}`]),
      ...(architecture.includes(`lib/${p}`) ? [] : [`docs/architecture.md lacks lib/${p}`]),
    ]);
    expect(missing).toEqual([]);
  });
});
