// The package as users install it: `npm pack`, installed into fresh CommonJS and ESM CDK apps next to the minimum
// aws-cdk-lib and constructs the peer dependencies allow, type-checked with NodeNext resolution, and synthesized.
// npm works from its cache (--prefer-offline), so this takes seconds once the cache holds the dependencies.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordTemplate } from './cfn-lint';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
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
const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { instanceType: InstanceType.G4DN_XLARGE, initialInstanceCount: 2 });
endpoint.autoScaleInstanceCount({ minCapacity: 2, maxCapacity: 4 }).scaleOnGpuUtilization('Gpu');
endpoint.addDashboard('Dashboard');
const models = new ModelArchive(stack, 'Models', {
  repositories: [app.node.getContext('repository') as string],
  bucket: endpoint.bucket,
  prefix: endpoint.prefix,
});
const name: string = versionedTargetModel('add_one_python', '0'.repeat(64));
if (targetModelProblems(name) !== undefined || !models.targetModels[0]!.startsWith('add_one_python-')) throw new Error('unexpected names');
app.synth();
`;

describe('the npm package in fresh CommonJS and ESM apps', () => {
  const work = mkdtempSync(join(tmpdir(), 'mme-packed-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  let tarball = '';
  let files: string[] = [];
  let typecheck: ReturnType<typeof spawnSync>;

  beforeAll(() => {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root, encoding: 'utf8' }),
    ) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(work, packed[0]!.filename);
    files = packed[0]!.files.map((f) => f.path);

    const app = join(work, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'fresh-cdk-app',
        private: true,
        dependencies: {
          'mme-deploy': `file:${tarball}`,
          // The minimum the peer dependencies allow, which is also what this repository develops against.
          'aws-cdk-lib': pkg.devDependencies['aws-cdk-lib'],
          constructs: pkg.devDependencies.constructs,
        },
      }),
    );
    execFileSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', '--loglevel=error'],
      {
        cwd: app,
        stdio: 'pipe',
        timeout: 120_000,
      },
    );
    writeFileSync(join(app, 'app.cts'), APP);
    writeFileSync(join(app, 'app.mts'), APP);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['app.cts', 'app.mts'],
      }),
    );
    // Type-checks with the package's own .d.ts files and emits app.cjs and app.mjs.
    typecheck = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: app,
      encoding: 'utf8',
    });
  }, 180_000);

  it('ships dist, the custom-resource handlers and the image, not the tests', () => {
    expect(files).toEqual(
      expect.arrayContaining(['dist/constructs/index.js', 'dist/lib/index.d.ts', 'constructs/handlers/scaling-guard/index.js']),
    );
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('dist/test/') || f.endsWith('.test.js'))).toEqual([]);
  });

  it('pins the tested minimum of the peer dependencies as the development versions', () => {
    expect(pkg.peerDependencies['aws-cdk-lib']).toBe(`^${pkg.devDependencies['aws-cdk-lib']}`);
    expect(pkg.peerDependencies.constructs).toBe(`^${pkg.devDependencies.constructs}`);
    const installed = JSON.parse(readFileSync(join(work, 'app', 'node_modules', 'aws-cdk-lib', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(installed.version).toBe(pkg.devDependencies['aws-cdk-lib']);
  });

  it('type-checks mme-deploy and mme-deploy/constructs under NodeNext from .cts and .mts', () => {
    expect(`${typecheck.stdout}${typecheck.stderr}`).toBe('');
    expect(typecheck.status).toBe(0);
  });

  for (const [kind, file] of [
    ['CommonJS', 'app.cjs'],
    ['ESM', 'app.mjs'],
  ] as const) {
    it(`synthesizes an endpoint and a model archive from a ${kind} app`, () => {
      const outdir = join(work, `out-${kind}`);
      const stackName = `Packed${kind}`;
      const run = spawnSync(process.execPath, [file], {
        cwd: join(work, 'app'),
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH,
          HOME: work,
          CDK_OUTDIR: outdir,
          CDK_CONTEXT_JSON: JSON.stringify({ stackName, repository }),
          CDK_VALIDATION: 'false',
        },
      });
      expect(run.stderr).not.toMatch(/Error/);
      expect(run.status).toBe(0);
      const template = JSON.parse(readFileSync(join(outdir, `${stackName}.template.json`), 'utf8')) as {
        Resources: Record<string, { Type: string }>;
      };
      recordTemplate(`packed tarball ${kind} app » ${stackName}`, template);
      const types = Object.values(template.Resources).map((r) => r.Type);
      for (const type of [
        'AWS::SageMaker::Endpoint',
        'Custom::CDKBucketDeployment',
        'Custom::MmeDeployScalingGuard',
        'Custom::MmeDeployArchiveRetention',
      ]) {
        expect(types).toContain(type);
      }
    });
  }
});
