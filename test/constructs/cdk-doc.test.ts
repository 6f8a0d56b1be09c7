// Slow: ~5 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// docs/cdk.md is what a CDK user copies from: its ```ts samples must compile against the real exports, and the names
// its tables list must be the ones the code reads. Both drift silently when a prop or a context key is renamed.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as ts from 'typescript';
import { APP_CONTEXT_KEYS } from '../../constructs';

const root = join(__dirname, '..', '..');
const cdkLib = dirname(require.resolve('aws-cdk-lib/package.json'));
const doc = readFileSync(join(root, 'docs', 'cdk.md'), 'utf8');

/** The ```ts blocks of the doc, with the line each starts on. */
function tsBlocks(markdown: string): Array<{ line: number; code: string }> {
  const blocks: Array<{ line: number; code: string }> = [];
  const pattern = /^```ts\n([\s\S]*?)^```$/gm;
  for (let m = pattern.exec(markdown); m; m = pattern.exec(markdown)) {
    blocks.push({ line: markdown.slice(0, m.index).split('\n').length, code: m[1]! });
  }
  return blocks;
}

/** The rows of the markdown table that follows `heading` (the first table after it), as arrays of cells. */
function tableAfter(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(heading);
  if (start < 0) throw new Error(`docs/cdk.md has no '${heading}'.`);
  const lines = markdown.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

/** The `code` spans of a cell. */
const codeSpans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

// The package's entry points as a user's compiler sees them: the declarations the build emits into dist/ (the test run's
// global setup rebuilds dist/ when a source is newer), so the compiler reads the exported types without parsing every
// source file of constructs/ and lib/ behind them. Missing, the samples fail to compile, loudly.
const CONSTRUCTS_TYPES = join(root, 'dist', 'constructs', 'index.d.ts');
const LIBRARY_TYPES = join(root, 'dist', 'lib', 'index.d.ts');

/** The names of the properties of an exported interface of constructs/, as the compiler sees them. */
function interfaceProperties(program: ts.Program, name: string): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(CONSTRUCTS_TYPES)!;
  const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).find((s) => s.name === name);
  if (!symbol) throw new Error(`constructs/ exports no ${name}.`);
  const type = checker.getDeclaredTypeOfSymbol(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  return type.getProperties().map((p) => p.name);
}

/** Where the stubbed SDK modules resolve (see `paths` below). */
const STUB = join(__dirname, '__cdk-doc-aws-sdk.d.ts');

/**
 * The expressions and type references of a file whose type, or the type its context expects, is the checker's error
 * type: what a name of a module that did not resolve has (the stubbed SDK's, Node's). The checker accepts anything for
 * it, so a sample passing or reading one would compile whatever it did.
 */
function stubbedTypesIn(program: ts.Program, fileName: string): Array<{ line: number; text: string }> {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(fileName)!;
  // The checker's error type is an intrinsic `any` by another name; the public API has no predicate for it.
  const isError = (type: ts.Type | undefined): boolean =>
    type !== undefined && (type.flags & ts.TypeFlags.Any) !== 0 && (type as { intrinsicName?: string }).intrinsicName === 'error';
  const found: Array<{ line: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    // An import's names are looked at where they are used; its module specifier has no type.
    if (ts.isImportDeclaration(node)) return;
    const expression = ts.isExpression(node);
    if ((expression || ts.isTypeNode(node)) && !ts.isImportTypeNode(node.parent) && !ts.isLiteralTypeNode(node.parent)) {
      if (isError(checker.getTypeAtLocation(node)) || (expression && isError(checker.getContextualType(node)))) {
        found.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line, text: node.getText(source) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('docs/cdk.md', () => {
  const blocks = tsBlocks(doc);
  // The samples live in memory as files of this directory, so that they resolve aws-cdk-lib as the project does.
  const virtual = new Map<string, string>();
  // The samples use a few names they do not declare (the user's stack, function, API, and the endpoint of the sample
  // before): declared here once, globally, so that a sample's own declarations shadow them.
  const globals = join(__dirname, '__cdk-doc-globals.d.ts');
  virtual.set(
    globals,
    [
      "declare const stack: import('aws-cdk-lib').Stack;",
      "declare const apiFunction: import('aws-cdk-lib/aws-lambda').IFunction;",
      "declare const api: import('aws-cdk-lib/aws-apigateway').RestApi;",
      "declare const apigateway: typeof import('aws-cdk-lib/aws-apigateway');",
      "declare const endpoint: import('mme-deploy/constructs').TritonMultiModelEndpoint;",
    ].join('\n'),
  );
  virtual.set(STUB, 'export {};\n');
  // A file that reads a type of the SDK and one of Node through the library's AWS layer: proves that the check below
  // sees them.
  const probe = join(__dirname, '__cdk-doc-sdk-probe.ts');
  virtual.set(
    probe,
    `import type { UploadOptions } from '${join(root, 'dist', 'lib', 'aws', 'model-store')}';\n` +
      'declare const options: UploadOptions;\nexport const client = options.client;\nexport const body = options.body;\n',
  );
  const files = blocks.map((block, i) => {
    const file = join(__dirname, `__cdk-doc-block-${i}.ts`);
    virtual.set(file, `${block.code}\nexport {};\n`);
    return file;
  });
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    // The project's lib (tsconfig.json): without it the target's default adds the DOM's declarations, 1.4 MB that
    // nothing here uses.
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    // Not Node's types either (@types/node and undici-types: 100 files, 2.3 MB): the samples are CDK app code that
    // uses no Node API, and only the library's stream and file signatures name one. A sample using one of Node's
    // globals fails to compile here, loudly (add 'node' back); one reaching a Node type through the library is caught
    // below, as a type of the SDK is.
    types: [],
    paths: {
      // The package's entry points, as the docs import them, mapped to their declarations (above).
      'mme-deploy/constructs': [CONSTRUCTS_TYPES],
      'mme-deploy': [LIBRARY_TYPES],
      // aws-cdk-lib's root is its core plus a namespace per service module (checked below): mapped to the core, the
      // names the samples import from it are the same declarations, without parsing the declarations of the ~250
      // service modules nothing here imports (half of the files the compiler would read). A sample importing a
      // namespace from the root would fail to compile here, loudly: import the module's own path.
      'aws-cdk-lib': [join(cdkLib, 'core', 'index.d.ts')],
      // The AWS SDK's declarations, which only the library's AWS layer (lib/aws/, lib/measure/) imports, resolve to an
      // empty module: 1,300 of the 2,650 files the compiler would read, none of them a type the samples touch. A type
      // from them is the checker's error type, which accepts anything; the samples reaching none is checked below.
      '@aws-sdk/*': [STUB],
      '@smithy/*': [STUB],
    },
  };
  const host = ts.createCompilerHost(options);
  // What tsc itself does: JSDoc comments are parsed only where they can change a type error (the .d.ts files of
  // aws-cdk-lib are mostly JSDoc).
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors;
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) =>
    virtual.has(f) ? ts.createSourceFile(f, virtual.get(f)!, language) : getSourceFile.call(host, f, language, ...rest);
  const program = ts.createProgram([globals, ...files, probe, CONSTRUCTS_TYPES], options, host);

  it('has ts samples (the extraction found them)', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  });

  it("resolves aws-cdk-lib's root as its core: the root exports only the core's names and a namespace per module", () => {
    const lines = readFileSync(join(cdkLib, 'index.d.ts'), 'utf8').split('\n').filter(Boolean);
    expect(lines).toContain("export * from './core';");
    const other = lines.filter((l) => l !== "export * from './core';" && !/^export \* as \w+ from '\.\/[\w-]+';$/.test(l));
    // Side-effect imports add no names.
    expect(other.filter((l) => !/^import '\.\/[\w-]+';$/.test(l))).toEqual([]);
    expect(program.getSourceFile(join(cdkLib, 'core', 'index.d.ts'))).toBeDefined();
  });

  it('compiles every ```ts sample against the real exports', () => {
    // Only the samples' own diagnostics: constructs/ and lib/ are type-checked by `npm run typecheck`.
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...[globals, ...files].flatMap((f) => ts.getPreEmitDiagnostics(program, program.getSourceFile(f))),
    ];
    const problems = diagnostics.map((d) => {
      const index = d.file ? files.indexOf(d.file.fileName) : -1;
      const line = index >= 0 ? blocks[index]!.line + 1 + d.file!.getLineAndCharacterOfPosition(d.start!).line : undefined;
      return `docs/cdk.md${line ? `:${line}` : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(problems).toEqual([]);
  });

  it("reaches no type of the AWS SDK or of Node (not read here): every type a sample sees is the exports' own", () => {
    expect(program.getSourceFile(STUB)).toBeDefined();
    expect(program.getSourceFiles().filter((f) => f.fileName.includes('/@types/node/')).length).toBe(0);
    const probed = stubbedTypesIn(program, probe).map((found) => found.text);
    expect(probed).toEqual(['client', 'options.client', 'client', 'body', 'options.body', 'body']);
    const samples = files.flatMap((f, i) =>
      stubbedTypesIn(program, f).map((found) => `docs/cdk.md:${blocks[i]!.line + 1 + found.line}: ${found.text}`),
    );
    expect([...stubbedTypesIn(program, globals).map((found) => found.text), ...samples]).toEqual([]);
  });

  it("lists exactly the app's context keys", () => {
    const keys = tableAfter(doc, '### Context keys').flatMap((row) => codeSpans(row[0]!));
    expect([...keys].sort()).toEqual(Object.keys(APP_CONTEXT_KEYS).sort());
  });

  it.each([
    ['### `TritonMultiModelEndpoint`', 'TritonMultiModelEndpointProps'],
    ['### `MultiModelEndpointDashboard`', 'MultiModelEndpointDashboardProps'],
  ])('names only real props in the table after %s', (heading, propsInterface) => {
    const table = tableAfter(doc, heading);
    const column = heading.includes('Dashboard') ? 2 : 0;
    const named = table.flatMap((row) => codeSpans(row[column]!));
    expect(named.length).toBeGreaterThan(3);
    const props = interfaceProperties(program, propsInterface);
    expect(named.filter((n) => !props.includes(n))).toEqual([]);
  });

  it('names every TritonMultiModelEndpoint prop in its table', () => {
    const named = tableAfter(doc, '### `TritonMultiModelEndpoint`').flatMap((row) => codeSpans(row[0]!));
    expect(interfaceProperties(program, 'TritonMultiModelEndpointProps').filter((p) => !named.includes(p))).toEqual([]);
  });
});
