// Type-checks apps under several tsconfig files in one process, with the apps' own TypeScript, as `tsc -p <file>`
// would for each (diagnostics of the config, the options, syntax, globals, semantics and emit; emit written unless
// noEmit), and prints one JSON line per config: {"config", "status" (0 without errors, else 1), "output" (what tsc
// prints, file names relative to the config's directory, as `cd <dir> && tsc -p <file>` prints them)}.
// Why one process: parsing and binding aws-cdk-lib's 4,000 declaration files is nearly all of a check (checking the app
// itself takes under half a second), and configs that differ only in module and moduleResolution parse and bind every
// declaration file alike, so the later configs reuse the first one's (see `shareable`); apps whose node_modules link
// to the same packages (the AWS SDK, TypeScript's own lib files) share those too.
// The configs may lie in several directories, which must all resolve the same TypeScript (the first one's).
'use strict';

const { dirname, basename, resolve } = require('node:path');
const { realpathSync } = require('node:fs');

const configs = process.argv.slice(2).map((config) => ({ config, dir: dirname(resolve(config)), file: basename(config) }));
const typescriptOf = (dir) => realpathSync(require.resolve('typescript', { paths: [dir] }));
const typescript = typescriptOf(configs[0]?.dir ?? process.cwd());
const ts = require(typescript);

const formatHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};
/** Options that change neither how a declaration file is parsed nor how it is bound. */
const RESOLUTION_ONLY = new Set(['module', 'moduleResolution', 'noEmit', 'configFilePath']);
/** Parsed declaration files: by the options their parse and binding depend on (`sharingKey`), then by file name. */
const parsed = new Map();
const resolutions = new Map();
/**
 * What the configs' hosts found on disk, by absolute path, for all of them: tsc's host remembers it for one program
 * (changeCompilerHostLikeToUseCache), and nothing changes the files between programs but their own emit, which
 * forgets what it writes (and the directories above it). Module resolution probes some 20,000 paths per config.
 */
const existing = { file: new Map(), directory: new Map() };

/**
 * The key under which parsed declaration files are shared. A declaration file's parse depends on its language version,
 * its module format and the JSDoc mode; whether it is a module is, for a declaration file, its own syntax alone
 * (moduleDetection auto: isFileForcedToBeModuleByFormat excludes declaration files), and binding reads the target and
 * the strict, const-enum and unreachable-code options (microsoft/TypeScript:src/compiler/binder.ts). So every option but
 * module, moduleResolution and noEmit is part of the key. tsserver's DocumentRegistry shares files the same way, with a
 * coarser key that also holds module and moduleResolution (src/services/documentRegistry.ts).
 * `optionsKey`: the options part, computed once per config.
 */
function sharingKey(optionsKey, createOptions) {
  const { languageVersion, impliedNodeFormat, jsDocParsingMode } = createOptions;
  return `${optionsKey}|${languageVersion}|${impliedNodeFormat}|${jsDocParsingMode}`;
}

/** `probe(path)`, remembered in `known` by absolute path (`dir` makes a relative one absolute). */
function remembered(known, dir, probe) {
  return (path) => {
    const key = resolve(dir, path);
    let found = known.get(key);
    if (found === undefined) known.set(key, (found = Boolean(probe(path))));
    return found;
  };
}

for (const { config: configPath, dir, file } of configs) {
  const other = typescriptOf(dir);
  if (other !== typescript) throw new Error(`${configPath} resolves ${other}, not ${typescript}: check it in its own process`);
  // The config's directory is the current one, as for `cd <dir> && tsc -p <file>`: ts.sys remembers the first one.
  process.chdir(dir);
  const getCurrentDirectory = () => dir;
  const unrecoverable = [];
  const config = ts.getParsedCommandLineOfConfigFile(file, undefined, {
    ...ts.sys,
    getCurrentDirectory,
    onUnRecoverableConfigFileDiagnostic: (d) => unrecoverable.push(d),
  });
  const diagnostics = [...unrecoverable];
  if (config) {
    const host = ts.createCompilerHost(config.options);
    host.getCurrentDirectory = getCurrentDirectory;
    // As tsc sets its host (performCompilation in microsoft/TypeScript:src/compiler/executeCommandLine.ts): JSDoc in
    // TypeScript files parsed only where it can matter to an error (@see, @link), which skips most of aws-cdk-lib's
    // 40 MB of declaration comments (about a quarter of the check's CPU time), and file reads and lookups cached per program.
    host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors;
    host.fileExists = remembered(existing.file, dir, host.fileExists);
    host.directoryExists = remembered(existing.directory, dir, host.directoryExists);
    const writeFile = host.writeFile;
    host.writeFile = (fileName, ...rest) => {
      for (let path = resolve(dir, fileName); path !== dirname(path); path = dirname(path)) {
        existing.file.delete(path);
        existing.directory.delete(path);
      }
      return writeFile(fileName, ...rest);
    };
    const canonical = ts.createGetCanonicalFileName(host.useCaseSensitiveFileNames());
    if (typeof ts.changeCompilerHostLikeToUseCache === 'function') {
      ts.changeCompilerHostLikeToUseCache(host, (fileName) => ts.toPath(fileName, host.getCurrentDirectory(), canonical));
    }
    // Configs in one directory whose options differ only in their file's path resolve every import alike: they share
    // one module resolution cache (the one `tsc -p` would make for each, microsoft/TypeScript:src/compiler/program.ts
    // createProgram), so a later one does not look up the imports of aws-cdk-lib's 4,000 files again.
    const resolutionKey = JSON.stringify([dir, Object.entries(config.options).filter(([name]) => name !== 'configFilePath')]);
    if (!resolutions.has(resolutionKey)) resolutions.set(resolutionKey, ts.createModuleResolutionCache(dir, canonical, config.options));
    const cache = resolutions.get(resolutionKey);
    host.getModuleResolutionCache = () => cache;
    host.resolveModuleNameLiterals = (literals, containingFile, redirected, options, file) =>
      literals.map((literal) => {
        const mode = ts.getModeForUsageLocation(file, literal, redirected?.commandLine.options ?? options);
        return ts.resolveModuleName(literal.text, containingFile, options, host, cache, redirected, mode);
      });
    const optionsKey = JSON.stringify(Object.entries(config.options).filter(([name]) => !RESOLUTION_ONLY.has(name)));
    const getSourceFile = host.getSourceFile;
    host.getSourceFile = (fileName, createOptions, onError, shouldCreateNew) => {
      // Under skipLibCheck a declaration file is parsed as for type information only (JSDocParsingMode.ParseForTypeInfo:
      // no JSDoc in TypeScript files). Its JSDoc is read only when that file is checked (the names in @see and @link,
      // which is why tsc parses those), which skipLibCheck skips, and JSDoc syntax errors are reported for JavaScript
      // files alone (getSyntacticDiagnosticsForFile in microsoft/TypeScript:src/compiler/program.ts): the same
      // diagnostics, for half the parse time of aws-cdk-lib's declaration files (whose @see and @link are many).
      if (config.options.skipLibCheck && typeof createOptions === 'object' && /\.d\.[cm]?ts$/.test(fileName)) {
        createOptions = { ...createOptions, jsDocParsingMode: ts.JSDocParsingMode.ParseForTypeInfo };
      }
      if (typeof createOptions !== 'object' || !/\.d\.[cm]?ts$/.test(fileName)) {
        return getSourceFile(fileName, createOptions, onError, shouldCreateNew);
      }
      const key = sharingKey(optionsKey, createOptions);
      let files = parsed.get(key);
      if (files === undefined) parsed.set(key, (files = new Map()));
      let source = files.get(fileName);
      if (source === undefined) files.set(fileName, (source = getSourceFile(fileName, createOptions, onError, shouldCreateNew)));
      return source;
    };
    const program = ts.createProgram({
      rootNames: config.fileNames,
      options: config.options,
      projectReferences: config.projectReferences,
      configFileParsingDiagnostics: config.errors,
      host,
    });
    // What tsc reports: the config's diagnostics, the options', syntax, then globals and semantics, then the emit's.
    diagnostics.push(...program.getConfigFileParsingDiagnostics(), ...program.getOptionsDiagnostics());
    const syntax = program.getSyntacticDiagnostics();
    diagnostics.push(...syntax);
    if (syntax.length === 0) diagnostics.push(...program.getGlobalDiagnostics(), ...program.getSemanticDiagnostics());
    if (config.options.declaration) diagnostics.push(...program.getDeclarationDiagnostics());
    if (!config.options.noEmit) diagnostics.push(...program.emit().diagnostics);
  }
  const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  const output = ts.formatDiagnostics(ts.sortAndDeduplicateDiagnostics(diagnostics), formatHost);
  process.stdout.write(`${JSON.stringify({ config: configPath, status: errors.length > 0 ? 1 : 0, output })}\n`);
}
