// Slow: ~11 s on a quiet 2-core machine (one `cdk synth` with aws-cdk-lib's template validation on: its rego engine
// (wasm) compiling its rules, whatever the template, is ~3 s of CPU of it since the app gives the engine its memory at
// once and keeps V8 from recompiling the engine's functions in the background, constructs/validator-memory.ts: the file
// took 18.5-22.6 s of CPU before that last step, 15.1-16.0 s after, jest and its start included, load 8-10).
// bin/app.ts, the app cdk.json names, and what `cdk synth` prints for it through the real CDK CLI: one synth serves
// the output, template and cdk-nag checks. The synth runs bin/app.ts as built in dist/ (the global setup builds it
// when stale), not cdk.json's `npx tsx bin/app.ts`: the same code and context (the CLI reads cdk.json), without npx
// and tsx compiling constructs/ and lib/ first. The bad-context run goes through tsx, as cdk.json does, so that
// bin/app.ts and everything it imports also load from source.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordTemplate } from './cfn-lint';

const root = join(__dirname, '..', '..');
const BUILT_APP = join('dist', 'bin', 'app.js');
const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { app: string; context: Record<string, unknown> };

describe('bin/app.ts', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'mme-app-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));
  let synth: SpawnSyncReturns<string>;

  beforeAll(() => {
    const args = ['synth', '-q', '--no-notices', '-o', outdir, '--app', `node ${BUILT_APP}`];
    synth = spawnSync(join(root, 'node_modules', '.bin', 'cdk'), args, {
      cwd: root,
      // No AWS setting (HOME without ~/.aws), and aws-cdk-lib's template validation on, as a user's synth runs it. No
      // reach outside the machine either: the CLI's notices (--no-notices) and telemetry are off. The python3 the global
      // setup found (MME_DEPLOY_PYTHON) checks model.py for the pack worker, not a version manager's shim on PATH.
      env: { PATH: process.env.PATH, HOME: outdir, CDK_DISABLE_CLI_TELEMETRY: 'true', MME_DEPLOY_PYTHON: process.env.MME_DEPLOY_PYTHON },
      encoding: 'utf8',
    });
  }, 180_000);

  it('is what cdk.json runs, with tsx', () => {
    expect(cdkJson.app).toBe('npx tsx bin/app.ts');
  });

  it('synthesizes the default stack offline, without credentials, and cdk-nag finds nothing', () => {
    expect(synth.stderr).not.toMatch(/ERROR/);
    expect(synth.status).toBe(0);
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: Array<{ pluginName: string; conclusion: string; violations: unknown[] }>;
    };
    // The report exists because the AwsSolutions plugin ran; it lists a plugin only when that plugin found something.
    const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
    expect(nag?.violations ?? []).toEqual([]);
  });

  it('packs the example ensemble and deploys it with the endpoint', () => {
    const template = JSON.parse(readFileSync(join(outdir, 'TritonMme.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
      Outputs: Record<string, { Value: unknown }>;
    };
    recordTemplate('bin/app.ts (cdk.json context) » TritonMme', template); // linted with the run's other templates
    const types = new Set(Object.values(template.Resources).map((r) => r.Type));
    const expected = ['AWS::SageMaker::Model', 'AWS::SageMaker::Endpoint', 'Custom::MmeDeployArchiveCopy', 'AWS::CloudWatch::Dashboard'];
    for (const type of expected) {
      expect(types).toContain(type);
    }
    const [copy] = Object.entries(template.Resources).filter(([, r]) => r.Type === 'Custom::MmeDeployArchiveCopy');
    expect(copy![1].Properties!.TargetModel).toMatch(/^sentiment_onnx-[0-9a-f]{12}\.tar\.gz$/);
    expect(template.Outputs.TargetModels.Value).toEqual({ 'Fn::GetAtt': [copy![0], 'TargetModel'] });
  });

  // What `cdk synth` prints: each warning alone, not after a bare `file:line` of the construct that raised it (the
  // annotation's stack trace, which the CLI prints when there is one).
  it("prints the app's own warning, without a source location before it, and no validator false positive", () => {
    expect(synth.status).toBe(0);
    const lines = synth.stderr.split('\n');
    const warning = lines.findIndex((l) => l.startsWith('WARNING initialInstanceCount is 1'));
    expect(warning).toBeGreaterThanOrEqual(0);
    expect(lines.filter((l) => /^\S+\.[jt]s:\d+:\d+$/.test(l.trim()))).toEqual([]);
    // The endpoint acknowledges the validator's report of Fn::GetAtt EndpointName (E9004, F6101): a documented
    // attribute its schema lacks. Unacknowledged, it was printed 29 times with a stack trace each.
    expect(synth.stderr).not.toMatch(/CloudFormation Validate|E9004|F6101|EndpointName/);
    expect(lines.filter((l) => l.startsWith('WARNING '))).toEqual([expect.stringMatching(/^WARNING initialInstanceCount is 1/)]);
  });

  it('stops with one message naming every bad context value', () => {
    const bad = mkdtempSync(join(tmpdir(), 'mme-app-'));
    try {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: bad,
        CDK_OUTDIR: bad,
        CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJson.context, maxCapacity: 'lots', minCapacity: 'few' }),
        CDK_VALIDATION: 'false',
      };
      const child = spawnSync(process.execPath, ['--import', 'tsx', 'bin/app.ts'], { cwd: root, env, encoding: 'utf8' });
      expect(child.status).not.toBe(0);
      expect(child.stderr).toContain('Invalid context for the mme-deploy app:');
      expect(child.stderr).toContain('context maxCapacity must be a number, got "lots".');
      expect(child.stderr).toContain('context minCapacity must be a number, got "few".');
      expect(child.stderr).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});
