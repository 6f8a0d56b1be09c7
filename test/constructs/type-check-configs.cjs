// Type-checks one app under several tsconfig files in one process, with the app's own TypeScript, as `tsc -p <file>`
// would for each (diagnostics of the config, the options, syntax, globals, semantics and emit; emit written unless
// noEmit), and prints one JSON line per config: {"config", "status" (0 without errors, else 1), "output" (what tsc
// prints)}.
// Why one process: parsing and binding aws-cdk-lib's 4,000 declaration files is nearly all of a check (checking the app
// itself takes under half a second), and configs that differ only in module and moduleResolution parse and bind every
// declaration file alike, so the later configs reuse the first one's (see `shareable`).
'use strict';

const ts = require(require.resolve('typescript', { paths: [process.cwd()] }));

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

for (const configPath of process.argv.slice(2)) {
  const unrecoverable = [];
  const config = ts.getParsedCommandLineOfConfigFile(configPath, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => unrecoverable.push(d),
  });
  const diagnostics = [...unrecoverable];
  if (config) {
    const host = ts.createCompilerHost(config.options);
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
