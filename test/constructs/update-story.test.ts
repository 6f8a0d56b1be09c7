// docs/cdk.md "Updates after the first deploy", on the generated templates: which resources a model change and a
// Triton version change touch. (The instance type change has its own test: scaling-guard.test.ts.)

import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, AssetStaging } from 'aws-cdk-lib';
import { TritonImage, TritonMmeStack, TritonMmeStackProps } from '../../constructs';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;
type Outputs = Record<string, { Value: unknown }>;

function synth(outdir: string, props: TritonMmeStackProps): { resources: Resources; outputs: Outputs } {
  AssetStaging.clearAssetHashCache();
  const app = new App({ outdir });
  new TritonMmeStack(app, 'TritonMme', props);
  const template = app.synth().getStackByName('TritonMme').template as { Resources: Resources; Outputs: Outputs };
  return { resources: template.Resources, outputs: template.Outputs };
}

/** The resources of these types, by logical ID, with their properties. */
function ofTypes(resources: Resources, types: string[]): Resources {
  return Object.fromEntries(Object.entries(resources).filter(([, r]) => types.includes(r.Type)));
}

const ENDPOINT_AND_SCALING = [
  'AWS::SageMaker::Model',
  'AWS::SageMaker::EndpointConfig',
  'AWS::SageMaker::Endpoint',
  'Custom::MmeDeployScalingGuard',
  'AWS::ApplicationAutoScaling::ScalableTarget',
  'AWS::ApplicationAutoScaling::ScalingPolicy',
];

describe('a model change', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'mme-update-'));
  const repository = join(mkdtempSync(join(tmpdir(), 'mme-update-repo-')), 'add_one');
  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
    rmSync(join(repository, '..'), { recursive: true, force: true });
  });
  cpSync(join(__dirname, 'fixtures', 'repositories', 'add_one_python'), repository, { recursive: true });
  const steady = { path: join(__dirname, 'fixtures', 'repositories', 'add_one_python'), name: 'steady' };
  const before = synth(outdir, { modelRepositories: [repository, steady] });
  writeFileSync(join(repository, 'add_one', '1', 'model.py'), '# changed\n', { flag: 'a' });
  const after = synth(outdir, { modelRepositories: [repository, steady] });
  const copies = (t: typeof before) => ofTypes(t.resources, ['Custom::MmeDeployArchiveCopy']);

  it('ships the changed archive under a new TargetModel, copied next to the old one (no pruning)', () => {
    const changed = (t: typeof before) => Object.values(copies(t)).find((r) => String(r.Properties!.TargetModel).startsWith('add_one-'))!;
    expect(changed(after).Properties!.Key).not.toEqual(changed(before).Properties!.Key);
    expect(changed(after).Properties!.Key).toMatch(/^models\/add_one-[0-9a-f]{12}\.tar\.gz$/);
  });

  it('leaves the copy of the unchanged archive exactly as it was: CloudFormation does not run it again', () => {
    const unchanged = (t: typeof before) =>
      Object.entries(copies(t)).filter(([, r]) => String(r.Properties!.TargetModel).startsWith('steady-'));
    expect(unchanged(after)).toEqual(unchanged(before));
    expect(unchanged(after)).toHaveLength(1);
  });

  it('leaves the model, endpoint configuration, endpoint and autoscaling exactly as they were', () => {
    expect(ofTypes(after.resources, ENDPOINT_AND_SCALING)).toEqual(ofTypes(before.resources, ENDPOINT_AND_SCALING));
  });
});

describe('a Triton version change', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'mme-update-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));
  const before = synth(outdir, { image: TritonImage.fromSageMakerDlc('24.09') });
  const after = synth(outdir, { image: TritonImage.fromSageMakerDlc('24.08') });
  const model = (t: typeof before) => Object.values(ofTypes(t.resources, ['AWS::SageMaker::Model']))[0]!.Properties!;

  it("changes the model's image, which replaces the model and, through its name, the endpoint configuration", () => {
    expect(JSON.stringify(model(after))).not.toEqual(JSON.stringify(model(before)));
    expect(JSON.stringify(model(after))).toContain('sagemaker-tritonserver:24.08-py3');
    const config = Object.values(ofTypes(after.resources, ['AWS::SageMaker::EndpointConfig']))[0]!.Properties!;
    expect(JSON.stringify(config)).toContain('"ModelName":{"Fn::GetAtt":["EndpointModel');
  });

  it('keeps the guard and the scaling resources as they were: the variant stays registered', () => {
    const scaling = ENDPOINT_AND_SCALING.slice(3);
    expect(ofTypes(after.resources, scaling)).toEqual(ofTypes(before.resources, scaling));
  });
});
