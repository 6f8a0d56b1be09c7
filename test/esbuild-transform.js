// Jest's transform for the TypeScript sources: esbuild strips the types, file by file, with a source map (failures
// point at the line in the .ts file). It checks no types, as ts-jest with `isolatedModules` did not either: CI's
// `npm run typecheck` (tsc --noEmit) does. A syntax error still fails the file that has it.
//
// Why not ts-jest: it loads the TypeScript compiler (~9 MB of JavaScript) and reads tsconfig.json, globbing the whole
// project, in every Jest process (the run's, each worker, each Jest a test starts), and transpiles a file about 50 times
// slower than esbuild when the transform cache is cold (a fresh clone, as in CI).
//
// The options are tsconfig.json's that change the emitted JavaScript for one file: the ES2022 target (class fields are
// defined, as tsc does for ES2022) and CommonJS modules with esModuleInterop (`import x from 'cjs'` is
// module.exports; `import * as m` a copy of it, as tsc's __importStar). jest.mock() calls would not be hoisted above
// the imports (ts-jest hoisted them): the tests use jest.doMock before a require(), which needs no hoisting.
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { transformSync, version } = require('esbuild');

const { compilerOptions } = require('../tsconfig.json');

const options = {
  loader: 'ts',
  format: 'cjs',
  target: compilerOptions.target.toLowerCase(),
  platform: 'node',
  // `await import('./x')` (the CLI's lazily loaded commands) becomes a require(), as tsc writes it for CommonJS: Jest's
  // module registry sees it (a real import() needs --experimental-vm-modules in Jest).
  supported: { 'dynamic-import': false },
  sourcemap: 'external',
  sourcesContent: false,
  tsconfigRaw: {
    compilerOptions: {
      target: compilerOptions.target,
      esModuleInterop: compilerOptions.esModuleInterop,
      isolatedModules: true,
      useDefineForClassFields: true,
    },
  },
};

const self = createHash('sha256').update(readFileSync(__filename)).update(version).update(JSON.stringify(options)).digest('hex');

module.exports = {
  canInstrument: false,
  getCacheKey(source, path) {
    return createHash('sha256').update(self).update('\0').update(path).update('\0').update(source).digest('hex');
  },
  process(source, path) {
    const result = transformSync(source, { ...options, sourcefile: path });
    return { code: result.code, map: result.map };
  },
};
