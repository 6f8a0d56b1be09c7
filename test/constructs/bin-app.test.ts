import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordTemplate } from './cfn-lint';

const root = join(__dirname, '..', '..');

/** Runs bin/app.ts the way `npx cdk synth` does (context from cdk.json, output dir), without any AWS setting. */
function runApp(extraContext: Record<string, unknown> = {}) {
  const outdir = mkdtempSync(join(tmpdir(), 'mme-app-'));
  const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { app: string; context: Record<string, unknown> };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: outdir, // no ~/.aws
    CDK_OUTDIR: outdir,
    CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJson.context, ...extraContext }),
    CDK_VALIDATION: 'false',
  };
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'bin/app.ts'], { cwd: root, env, encoding: 'utf8' });
  return { outdir, child, cdkJson };
}

describe('bin/app.ts', () => {
  const { outdir, child, cdkJson } = runApp();
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('is what cdk.json runs, with tsx', () => {
    expect(cdkJson.app).toBe('npx tsx bin/app.ts');
  });

  it('synthesizes the default stack offline, without credentials, and cdk-nag finds nothing', () => {
    expect(child.stderr).not.toMatch(/ERROR/);
    expect(child.status).toBe(0);
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

  it('stops with one message naming every bad context value', () => {
    const bad = runApp({ maxCapacity: 'lots', minCapacity: 'few' });
    try {
      expect(bad.child.status).not.toBe(0);
      expect(bad.child.stderr).toContain('Invalid context for the mme-deploy app:');
      expect(bad.child.stderr).toContain('context maxCapacity must be a number, got "lots".');
      expect(bad.child.stderr).toContain('context minCapacity must be a number, got "few".');
      expect(bad.child.stderr).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      rmSync(bad.outdir, { recursive: true, force: true });
    }
  });
});
