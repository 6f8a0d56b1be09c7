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
const parsed = new Map();

/**
 * The key under which a parsed declaration file is shared. A declaration file's parse depends on its language version,
 * its module format and the JSDoc mode; whether it is a module is, for a declaration file, its own syntax alone
 * (moduleDetection auto: isFileForcedToBeModuleByFormat excludes declaration files), and binding reads the target and
 * the strict, const-enum and unreachable-code options (microsoft/TypeScript:src/compiler/binder.ts). So every option but
 * module, moduleResolution and noEmit is part of the key. tsserver's DocumentRegistry shares files the same way, with a
 * coarser key that also holds module and moduleResolution (src/services/documentRegistry.ts).
 */
function shareable(fileName, options, createOptions) {
  if (!/\.d\.[cm]?ts$/.test(fileName)) return undefined;
  const affecting = Object.entries(options).filter(([name]) => !RESOLUTION_ONLY.has(name));
  const { languageVersion, impliedNodeFormat, jsDocParsingMode } = createOptions;
  return JSON.stringify([fileName, affecting, languageVersion, impliedNodeFormat, jsDocParsingMode]);
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
    if (typeof ts.changeCompilerHostLikeToUseCache === 'function') {
      const canonical = ts.createGetCanonicalFileName(host.useCaseSensitiveFileNames());
      ts.changeCompilerHostLikeToUseCache(host, (fileName) => ts.toPath(fileName, host.getCurrentDirectory(), canonical));
    }
    const getSourceFile = host.getSourceFile;
    host.getSourceFile = (fileName, createOptions, onError, shouldCreateNew) => {
      const key = typeof createOptions === 'object' ? shareable(fileName, config.options, createOptions) : undefined;
      if (key === undefined) return getSourceFile(fileName, createOptions, onError, shouldCreateNew);
      if (!parsed.has(key)) parsed.set(key, getSourceFile(fileName, createOptions, onError, shouldCreateNew));
      return parsed.get(key);
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
