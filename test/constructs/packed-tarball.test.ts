// Slow: ~43 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// The package as users install it: `npm pack`, installed into fresh CDK apps next to the minimum aws-cdk-lib the peer
// dependencies allow and next to the newest one they allow, type-checked with NodeNext resolution (.cts and .mts)
// and with the classic `module: commonjs` + node10 resolution (TypeScript 5, what `cdk init` made for years),
// synthesized as CommonJS and as ESM; every template goes to the run's cfn-lint and the API-model check.
// npm works from its cache (--prefer-offline) and finds the package's dependencies and the minimum aws-cdk-lib
// already in the app, hard-linked from this repository's node_modules (placeOwn: their closure in package-lock.json),
// so it unpacks only the tarball and TypeScript 5; the newest aws-cdk-lib it unpacked stays unpacked for the next run
// (NEWEST_CACHE: 61 s of CPU, against 66 s for a run that unpacks it, at a load of 3). The type checks of both apps
// run in one process (type-check-configs.cjs), which parses aws-cdk-lib's 4,000 declaration files once per app for all
// its configs instead of once per `tsc` (the file took 101 s of CPU instead of 128 s, both runs side by side on a
// loaded machine), the second app's linked packages once for both, skips the JSDoc that tsc skips (80 to 83 s of CPU
// instead of 110 s, runs at a load of 6 to 7 on 2 cores) and, under skipLibCheck, the JSDoc of declaration files
// (which only checking them reads), and resolves the imports once for configs that resolve alike; then the four synths
// run side by side. The placed dependencies and these last two took the file from 79 s of CPU to 55 to 57 s (warm
// runs, one after the other, at a load of 2 to 7 on 2 cores; 77-88 s against 68-73 s side by side at loads of 12-30).
// The synths' python3 named by MME_DEPLOY_PYTHON (not a version manager's shim) and the file checks shared by all
// configs took a run from 62 s of CPU to 57 s (jest included, at a load of 6 to 8).

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ApiModels, botocoreDataDir, formatFindings } from './api-model';
import { recordTemplate } from './cfn-lint';
import { loadScaled } from '../load-scale';
import { EXTRA_CA_VARIABLE } from '../tools';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const repository = join(__dirname, 'fixtures', 'repositories', 'add_one_python');

// dist/ is built once, before any test file runs, by the global setup (test/global-setup.ts): this file never
// rebuilds it, so the bundled-CLI tests running beside it read one dist/ throughout.

const APP = `
import { App, Stack } from 'aws-cdk-lib';
import { InstanceType, ModelArchive, TritonMultiModelEndpoint } from 'mme-deploy/constructs';
import { targetModelProblems, versionedTargetModel } from 'mme-deploy';

const app = new App();
const stack = new Stack(app, app.node.getContext('stackName') as string);
const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', {
  instanceType: InstanceType.G4DN_XLARGE,
  initialInstanceCount: 2,
  tags: { team: 'ml' },
});
endpoint.autoScaleInstanceCount({ minCapacity: 2, maxCapacity: 4 }).scaleOnGpuUtilization('Gpu');
endpoint.addDashboard('Dashboard');
const models = new ModelArchive(stack, 'Models', {
  repositories: [app.node.getContext('repository') as string],
  bucket: endpoint.bucket,
  prefix: endpoint.prefix,
});
const name: string = versionedTargetModel('add_one_python', '0'.repeat(64));
const literal = models.literalTargetModels[0]!;
if (targetModelProblems(name) !== undefined || !literal.startsWith('add_one_python-')) throw new Error('unexpected names');
app.synth();
`;

/** The aws-cdk-lib versions the apps install: the floor (what this repository develops against) and the peer range. */
const CDK_VERSIONS = [
  ['the minimum aws-cdk-lib', pkg.devDependencies['aws-cdk-lib']!],
  // The range itself: npm installs the newest release it allows.
  ['the newest aws-cdk-lib in the peer range', pkg.peerDependencies['aws-cdk-lib']!],
] as const;

/**
 * Where the newest aws-cdk-lib stays unpacked between runs (hard links to what npm unpacked), by version: placed in
 * the app before `npm install`, npm keeps it (a package that satisfies its range), so a warm run unpacks no
 * aws-cdk-lib at all, about 20 s of CPU. Only the version npm would install now is placed, so the app still gets the
 * newest release the range allows. `npm ci` empties it with the rest of node_modules.
 */
const NEWEST_CACHE = join(root, 'node_modules', '.cache', 'mme-deploy-tests', 'aws-cdk-lib');

/**
 * Hard-links into `app`'s node_modules the packages of this repository's node_modules that `dependencies` need: their
 * closure in package-lock.json (dependencies, optional ones and required peers, each found where Node would find it),
 * nothing more, so that a dependency the package uses but does not declare is still missing in the app.
 */
function placeOwn(app: string, dependencies: Record<string, string>): void {
  type Locked = Partial<Record<'dependencies' | 'optionalDependencies' | 'peerDependencies', Record<string, string>>> & {
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
  let locked: Record<string, Locked>;
  try {
    locked = (JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, Locked> }).packages;
  } catch {
    return; // no lock: npm installs everything
  }
  const found = new Set<string>();
  const visit = (from: string, names: Iterable<string>) => {
    for (const name of names) {
      // node_modules/<name> in `from`, then in each package above it, then at the top (lock paths: `from` is '' or
      // node_modules/a/node_modules/b...).
      let dir = from;
      while (dir !== '' && locked[`${dir}/node_modules/${name}`] === undefined) {
        dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')));
      }
      const at = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
      if (locked[at] === undefined || found.has(at) || !existsSync(join(root, at, 'package.json'))) continue;
      found.add(at);
      const { dependencies: own, optionalDependencies, peerDependencies, peerDependenciesMeta } = locked[at]!;
      const peers = Object.keys(peerDependencies ?? {}).filter((peer) => !peerDependenciesMeta?.[peer]?.optional);
      visit(at, [...Object.keys({ ...own, ...optionalDependencies }), ...peers]);
    }
  };
  visit('', Object.keys(dependencies));
  // A package's own node_modules comes with it.
  const tops = [...found].sort().filter((at, i, all) => !all.slice(0, i).some((above) => at.startsWith(`${above}/`)));
  if (tops.length > 0) execFileSync('cp', ['-al', '--parents', ...tops, app], { cwd: root });
}

/**
 * The environment of the npm commands: without the update check npm makes after a command (a registry request for
 * npm's own metadata, at most once a week), which this machine's ~/.npmrc turns off but a fresh CI account does not;
 * with the NODE_EXTRA_CA_CERTS the global setup set aside for the suite's other node processes (a proxy to the registry
 * may need it).
 */
const extraCa = process.env[EXTRA_CA_VARIABLE];
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', ...(extraCa ? { NODE_EXTRA_CA_CERTS: extraCa } : {}) };

/** A registry release: its version and the SRI integrity of its tarball (`sha512-<base64>`). */
interface Release {
  readonly version: string;
  readonly integrity?: string;
}

/** The newest aws-cdk-lib in the peer range, as npm resolves it now (its cached metadata first), or undefined. */
function newestInRange(cwd: string): Release | undefined {
  try {
    const listed = JSON.parse(
      execFileSync('npm', ['view', `aws-cdk-lib@${CDK_VERSIONS[1][1]}`, 'version', 'dist.integrity', '--json', '--prefer-offline'], {
        cwd,
        env: NPM_ENV,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as { version: string; 'dist.integrity'?: string } | Array<{ version: string; 'dist.integrity'?: string }>;
    // The highest: npm picks the `latest` tag when it is in the range, which for aws-cdk-lib is the highest 2.x.
    const parts = (v: string) => v.split('.').map(Number);
    const newest = (Array.isArray(listed) ? listed : [listed]).reduce((a, b) => (later(parts(b.version), parts(a.version)) ? b : a));
    return { version: newest.version, ...(newest['dist.integrity'] ? { integrity: newest['dist.integrity'] } : {}) };
  } catch {
    return undefined;
  }
}

function later(a: number[], b: number[]): boolean {
  const i = a.findIndex((n, k) => n !== b[k]);
  return i >= 0 && a[i]! > b[i]!;
}

/**
 * The registry's tarball of `release` as npm's cache holds it, or undefined: cacache keeps a tarball under the hex
 * digest of its integrity, content-v2/<algorithm>/<2 hex>/<2 hex>/<rest> (npm/cacache:lib/content/path.js:15), in
 * `_cacache` of npm's cache directory: npm_config_cache, else ~/.npm on Linux and macOS
 * (npm/cli:workspaces/config/lib/definitions/definitions.js:85 and :429). Its digest is checked here.
 */
function cachedTarball(release: Release): string | undefined {
  const digest = /^sha512-([A-Za-z0-9+/]+=*)$/.exec(release.integrity ?? '')?.[1];
  if (digest === undefined) return undefined;
  const hex = Buffer.from(digest, 'base64').toString('hex');
  const cache = process.env.npm_config_cache || join(homedir(), '.npm');
  const file = join(cache, '_cacache', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  try {
    return createHash('sha512').update(readFileSync(file)).digest('hex') === hex ? file : undefined;
  } catch {
    return undefined; // not in the cache
  }
}

/**
 * Unpacks aws-cdk-lib@`release` into `into` with tar, from the registry's tarball in npm's cache: read there directly
 * when its integrity is known (cachedTarball), else copied out by `npm pack` of the registry package (its integrity
 * checked), which cost 2.7 s of CPU more. This file took 35.3-36.3 s of CPU on a clean clone with `npm pack`, 38.8 s
 * with npm install unpacking it (30.4 s with NEWEST_CACHE's copy). npm install then keeps it, as it keeps what
 * NEWEST_CACHE places, and adds what npm would nest in it (a dependency the minimum's copy does not satisfy). On any
 * failure nothing is left: npm install unpacks it itself.
 */
function unpackFromCache(release: Release, into: string, work: string): void {
  const dir = mkdtempSync(join(work, 'newest-'));
  try {
    let tarball = cachedTarball(release);
    if (tarball === undefined) {
      const packed = JSON.parse(
        execFileSync('npm', ['pack', `aws-cdk-lib@${release.version}`, '--json', '--prefer-offline', '--pack-destination', dir], {
          cwd: dir,
          env: NPM_ENV,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      ) as Array<{ filename: string }>;
      tarball = join(dir, packed[0]!.filename);
    }
    mkdirSync(into, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', into, '--strip-components=1', '--no-same-owner'], { stdio: 'pipe' });
  } catch {
    rmSync(into, { recursive: true, force: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Keeps the newest aws-cdk-lib npm unpacked for the next run (NEWEST_CACHE), unless that version is kept already. */
function keepNewest(installed: string): void {
  const { version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string };
  const kept = join(NEWEST_CACHE, version);
  if (existsSync(kept)) return;
  // Linked under a name of its own, then renamed into place: a run beside this one never sees half a copy.
  const partial = `${kept}.${process.pid}`;
  try {
    mkdirSync(NEWEST_CACHE, { recursive: true });
    execFileSync('cp', ['-al', installed, partial]);
    renameSync(partial, kept);
  } catch {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** Checks an app under several tsconfig files with the app's own TypeScript: one JSON line per config. */
const TYPE_CHECK = join(__dirname, 'type-check-configs.cjs');
const NEWEST_ALIAS = 'aws-cdk-lib-newest';

interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** spawnSync's result, without blocking: the synths run side by side. */
function run(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** One config's result, as `tsc -p` would give it: its exit status and its output. */
interface Checked {
  readonly status: number;
  readonly output: string;
}

/** Runs type-check-configs.cjs in `dir` over `configs` (paths from `dir`); a crash of the checker fails every config. */
async function typeCheck(dir: string, configs: readonly string[]): Promise<Checked[]> {
  const ran = await run([TYPE_CHECK, ...configs], { cwd: dir });
  const lines = ran.stdout.split('\n').filter((line) => line !== '');
  return configs.map((config, i) => {
    const line = lines[i];
    if (ran.status !== 0 || line === undefined) return { status: ran.status || 1, output: `${ran.stdout}${ran.stderr}` };
    const result = JSON.parse(line) as Checked & { config: string };
    return { status: result.status, output: result.config === config ? result.output : `checked ${result.config}, not ${config}` };
  });
}

const KINDS = [
  ['CommonJS', 'app.cjs'],
  ['ESM', 'app.mjs'],
] as const;

describe('the npm package in fresh CommonJS and ESM apps', () => {
  const work = mkdtempSync(join(tmpdir(), 'mme-packed-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  let files: string[] = [];
  interface App {
    readonly dir: string;
    readonly installed: string;
    readonly nodeNext: Checked;
    readonly node10: Checked;
    /** A config whose app has a type error: proves the checks report what they find. */
    readonly broken: Checked;
    /** The synth of each kind (CommonJS, ESM): its output directory and its run. */
    readonly synths: Record<string, { readonly outdir: string; readonly stackName: string; readonly run: Ran }>;
  }
  const apps = new Map<string, App>();
  // The API models are read once for the four templates.
  let models: ApiModels | null | undefined;
  const apiModels = () => {
    if (models === undefined) {
      const dataDir = botocoreDataDir();
      models = dataDir ? new ApiModels(dataDir) : null;
    }
    return models;
  };

  beforeAll(async () => {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
        cwd: root,
        env: NPM_ENV,
        encoding: 'utf8',
      }),
    ) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const tarball = join(work, packed[0]!.filename);
    files = packed[0]!.files.map((f) => f.path);

    // One npm install for both: the newest aws-cdk-lib under an alias next to the minimum, then a second app whose
    // node_modules links to the first one's, with the newest as its aws-cdk-lib and its own copy of mme-deploy (so
    // that mme-deploy resolves that aws-cdk-lib). Installing twice took twice as long on a loaded machine.
    const first = join(work, 'app-0');
    mkdirSync(join(first, 'node_modules'), { recursive: true });
    // The minimum aws-cdk-lib and constructs are the exact versions this repository develops against, and the
    // package's dependencies are in its node_modules too: what the app needs of them is hard-linked into it (npm keeps
    // a package that satisfies its range, and replaces one that does not), so that npm unpacks one aws-cdk-lib (some
    // 200 MB) instead of two, and not the AWS SDK again. The installed-version test below still checks which version
    // the app resolves.
    const { 'aws-cdk-lib': minimum, constructs } = pkg.devDependencies;
    placeOwn(first, { ...pkg.dependencies, 'aws-cdk-lib': minimum!, constructs: constructs! });
    const newest = newestInRange(work);
    const cached = newest === undefined ? undefined : join(NEWEST_CACHE, newest.version);
    if (cached !== undefined && existsSync(join(cached, 'package.json'))) {
      execFileSync('cp', ['-al', cached, join(first, 'node_modules', NEWEST_ALIAS)]);
    } else if (newest !== undefined) {
      unpackFromCache(newest, join(first, 'node_modules', NEWEST_ALIAS), work);
    }
    writeFileSync(
      join(first, 'package.json'),
      JSON.stringify({
        name: 'fresh-cdk-app',
        private: true,
        dependencies: {
          'mme-deploy': `file:${tarball}`,
          'aws-cdk-lib': CDK_VERSIONS[0][1],
          [NEWEST_ALIAS]: `npm:aws-cdk-lib@${CDK_VERSIONS[1][1]}`,
          constructs: pkg.devDependencies.constructs,
        },
        // TypeScript 5: TypeScript 6 refuses node10 resolution, which classic apps still use.
        devDependencies: { typescript: '5' },
      }),
    );
    execFileSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', '--loglevel=error'],
      // A deadline for a hang, scaled by the load: on a busy machine npm unpacking aws-cdk-lib takes minutes.
      { cwd: first, env: NPM_ENV, stdio: 'pipe', timeout: loadScaled(180_000) },
    );
    keepNewest(join(first, 'node_modules', NEWEST_ALIAS));
    const second = join(work, 'app-1');
    mkdirSync(join(second, 'node_modules'), { recursive: true });
    for (const entry of readdirSync(join(first, 'node_modules'))) {
      if (entry === NEWEST_ALIAS || entry === 'aws-cdk-lib' || entry === 'mme-deploy') continue;
      symlinkSync(join(first, 'node_modules', entry), join(second, 'node_modules', entry));
    }
    symlinkSync(join(first, 'node_modules', NEWEST_ALIAS), join(second, 'node_modules', 'aws-cdk-lib'));
    cpSync(join(first, 'node_modules', 'mme-deploy'), join(second, 'node_modules', 'mme-deploy'), { recursive: true });

    const dirs = [first, second];
    const CONFIGS = ['tsconfig.json', 'tsconfig.node10.json', 'tsconfig.broken.json'];
    for (const dir of dirs) {
      writeFileSync(join(dir, 'app.cts'), APP);
      writeFileSync(join(dir, 'app.mts'), APP);
      writeFileSync(join(dir, 'app-node10.ts'), APP);
      writeFileSync(join(dir, 'app-broken.ts'), `${APP}\nconst count: string = endpoint.initialInstanceCount;\n`);
      const options = { target: 'es2022', strict: true, skipLibCheck: true, types: [] };
      writeFileSync(
        join(dir, CONFIGS[0]!),
        JSON.stringify({
          compilerOptions: { ...options, module: 'nodenext', moduleResolution: 'nodenext' },
          files: ['app.cts', 'app.mts'],
        }),
      );
      // The tsconfig `cdk init app --language typescript` wrote before NodeNext: module commonjs, node10 resolution.
      writeFileSync(
        join(dir, CONFIGS[1]!),
        JSON.stringify({
          compilerOptions: { ...options, module: 'commonjs', moduleResolution: 'node', noEmit: true },
          files: ['app-node10.ts'],
        }),
      );
      writeFileSync(
        join(dir, CONFIGS[2]!),
        JSON.stringify({
          compilerOptions: { ...options, module: 'commonjs', moduleResolution: 'node', noEmit: true },
          files: ['app-broken.ts'],
        }),
      );
    }
    // Type-checks with the package's own .d.ts files and emits app.cjs and app.mjs, which the synths then run. Both
    // apps in one process: the second one's node_modules links to the first one's, so the declaration files of the AWS
    // SDK and TypeScript's lib files are parsed once for both (type-check-configs.cjs).
    const checks = await typeCheck(
      work,
      dirs.flatMap((dir) => CONFIGS.map((config) => join(basename(dir), config))),
    );
    await Promise.all(
      CDK_VERSIONS.map(async ([label], index) => {
        const dir = dirs[index]!;
        const manifest = join(dir, 'node_modules', 'aws-cdk-lib', 'package.json');
        const installed = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
        const synths = await Promise.all(
          KINDS.map(async ([kind, file]) => {
            const outdir = join(dir, `out-${kind}`);
            const stackName = `Packed${kind}`;
            // A fresh app's environment, plus the python3 the global setup found (MME_DEPLOY_PYTHON): the model
            // archive's syntax check then starts python3 itself, not a version manager's shim on PATH (about half a
            // second of CPU per synth).
            const python = process.env.MME_DEPLOY_PYTHON;
            const env = {
              PATH: process.env.PATH,
              HOME: work,
              CDK_OUTDIR: outdir,
              CDK_CONTEXT_JSON: JSON.stringify({ stackName, repository }),
              CDK_VALIDATION: 'false',
              ...(python === undefined ? {} : { MME_DEPLOY_PYTHON: python }),
            };
            return [kind, { outdir, stackName, run: await run([file], { cwd: dir, env }) }] as const;
          }),
        );
        const [nodeNext, node10, broken] = checks.slice(index * CONFIGS.length) as [Checked, Checked, Checked];
        apps.set(label, { dir, installed, nodeNext, node10, broken, synths: Object.fromEntries(synths) });
      }),
    );
  }, 240_000);

  it('ships dist, the custom-resource handlers and the image, not the tests', () => {
    expect(files).toEqual(
      expect.arrayContaining(['dist/constructs/index.js', 'dist/lib/index.d.ts', 'constructs/handlers/scaling-guard/index.js']),
    );
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('dist/test/') || f.endsWith('.test.js'))).toEqual([]);
  });

  it('runs the installed `mme-deploy` command, started from the code cache the package ships', () => {
    const bin = ['dist/bin/mme-deploy.js', 'dist/bin/mme-deploy-cli.js', 'dist/bin/mme-deploy-cli.cache'];
    expect(files).toEqual(expect.arrayContaining(bin));
    // The app npm installed from the tarball (the other one holds a copy of the package).
    const dir = join(work, 'app-0');
    const env = { PATH: process.env.PATH, HOME: work };
    const version = spawnSync(join(dir, 'node_modules', '.bin', 'mme-deploy'), ['--version'], { cwd: dir, env, encoding: 'utf8' });
    expect(version).toMatchObject({ status: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const launcher = JSON.stringify(join(dir, 'node_modules', 'mme-deploy', 'dist', 'bin', 'mme-deploy.js'));
    const use = spawnSync(process.execPath, ['-e', `process.stdout.write(require(${launcher}).compileCli().cache)`], {
      cwd: dir,
      env,
      encoding: 'utf8',
    });
    expect({ stdout: use.stdout, stderr: use.stderr }).toEqual({ stdout: 'used', stderr: '' });
  });

  // The npm package's files as npm lists them (the pack above): every docs/ page a message of lib/ names ships in it.
  it('ships docs/ in the npm package, so every docs/ page a message names is there', () => {
    const shipped = new Set(files);
    const named = new Set<string>();
    const walk = (at: string): void => {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        const path = join(at, entry.name);
        if (entry.isDirectory()) walk(path);
        else for (const [doc] of readFileSync(path, 'utf8').matchAll(/docs\/[\w-]+\.md/g)) named.add(doc);
      }
    };
    walk(join(root, 'lib'));
    expect(named.size).toBeGreaterThan(0);
    expect([...named].filter((doc) => !shipped.has(doc))).toEqual([]);
    expect(shipped.has('README.md')).toBe(true);
  });

  it('pins the tested minimum of the peer dependencies as the development versions, and also installs a newer one', () => {
    expect(pkg.peerDependencies['aws-cdk-lib']).toBe(`^${pkg.devDependencies['aws-cdk-lib']}`);
    expect(pkg.peerDependencies.constructs).toBe(`^${pkg.devDependencies.constructs}`);
    expect(apps.get(CDK_VERSIONS[0][0])!.installed).toBe(pkg.devDependencies['aws-cdk-lib']);
    const [major, minor] = apps.get(CDK_VERSIONS[1][0])!.installed.split('.').map(Number);
    expect(major).toBe(2);
    expect(minor).toBeGreaterThanOrEqual(Number(pkg.devDependencies['aws-cdk-lib']!.split('.')[1]));
  });

  for (const [label] of CDK_VERSIONS) {
    describe(`with ${label}`, () => {
      it('type-checks mme-deploy and mme-deploy/constructs under NodeNext from .cts and .mts', () => {
        const { nodeNext } = apps.get(label)!;
        expect(nodeNext.output).toBe('');
        expect(nodeNext.status).toBe(0);
      });

      it('type-checks them in a classic app: module commonjs, node10 resolution, TypeScript 5 (typesVersions)', () => {
        const { node10 } = apps.get(label)!;
        expect(node10.output).toBe('');
        expect(node10.status).toBe(0);
      });

      it('reports a type error in such an app, with its file and line, as tsc does', () => {
        const { broken } = apps.get(label)!;
        const line = APP.split('\n').length + 1;
        const error = `app-broken.ts(${line},7): error TS2322: Type 'number' is not assignable to type 'string'.\n`;
        expect(broken.output).toBe(error);
        expect(broken.status).toBe(1);
      });

      for (const [kind] of KINDS) {
        it(`synthesizes an endpoint and a model archive from a ${kind} app, and keeps tags off the scalable target`, () => {
          const { installed, synths } = apps.get(label)!;
          const { outdir, stackName, run: synth } = synths[kind]!;
          expect(synth.stderr).not.toMatch(/Error/);
          expect(synth.status).toBe(0);
          const template = JSON.parse(readFileSync(join(outdir, `${stackName}.template.json`), 'utf8')) as {
            Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
          };
          recordTemplate(`packed tarball ${kind} app, aws-cdk-lib ${installed} » ${stackName}`, template);
          const types = Object.values(template.Resources).map((r) => r.Type);
          for (const type of [
            'AWS::SageMaker::Endpoint',
            'Custom::MmeDeployArchiveCopy',
            'Custom::MmeDeployScalingGuard',
            'Custom::MmeDeployArchiveRetention',
          ]) {
            expect(types).toContain(type);
          }
          // RegisterScalableTarget refuses tags on a registered target, and cfn-lint 1.51 knows no Tags there (E3002).
          const tagged = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type && r.Properties?.Tags);
          expect(tagged('AWS::ApplicationAutoScaling::ScalableTarget')).toEqual([]);
          expect(tagged('AWS::SageMaker::Endpoint')).toHaveLength(1);
          const models = apiModels();
          if (models) expect(formatFindings(models.checkTemplate(template).errors)).toBe('');
        });
      }
    });
  }
});
