import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { APP_CONTEXT_KEYS, TritonMmeStack, readAppContext } from '../../constructs';

function settings(context: Record<string, unknown>) {
  return readAppContext(new App({ context }).node);
}

describe('the cdk app context', () => {
  it('defaults to stack TritonMme, env-agnostic, cdk-nag on and no model repositories', () => {
    const s = settings({});
    expect([s.stackName, s.region, s.nag]).toEqual(['TritonMme', undefined, true]);
    expect(s.stackProps).toMatchObject({
      instanceType: undefined,
      minCapacity: undefined,
      maxCapacity: undefined,
      gpuUtilizationTarget: undefined,
      modelRepositories: undefined,
      modelBucketName: undefined,
    });
  });

  it('reads command-line strings as numbers, booleans and comma-separated or JSON lists', () => {
    expect(settings({ maxCapacity: '3', nag: 'false', modelRepositories: 'a, b' })).toMatchObject({
      nag: false,
      stackProps: { maxCapacity: 3, modelRepositories: ['a', 'b'] },
    });
    expect(settings({ modelRepositories: '["x/y"]' }).stackProps.modelRepositories).toEqual(['x/y']);
    expect(settings({ modelRepositories: '' }).stackProps.modelRepositories).toEqual([]);
    expect(settings({ modelRepositories: ['from/cdk.json'] }).stackProps.modelRepositories).toEqual(['from/cdk.json']);
  });

  it('warns about keys it does not read: did you mean the closest known key, else the known ones', () => {
    const context = { maxCapcity: 3, instancetype: 'ml.g5.xlarge', zzzzzzzzzzzzzz: 1, 'acknowledged-issue-numbers': [1] };
    expect(settings(context).warnings).toEqual([
      'context maxCapcity is not a key this app reads: did you mean maxCapacity? (-c maxCapacity=...)',
      'context instancetype is not a key this app reads: did you mean instanceType? (-c instanceType=...)',
      expect.stringMatching(/^context zzzzzzzzzzzzzz is not a key this app reads \(a typo\?\); known keys: stackName, region,/),
    ]);
  });

  it('names every problem in one error: bad values and unknown keys together', () => {
    expect(() => settings({ minCapacity: 'two', maxCapcity: 3 })).toThrow(
      new RegExp(
        /Invalid context for the mme-deploy app:\n {2}- context minCapacity.*\n/.source +
          / {2}- context maxCapcity is not a key this app reads: did you mean maxCapacity\?/.source,
      ),
    );
  });

  it('rejects bad values and conflicting image choices in one error', () => {
    let message = '';
    try {
      settings({ minCapacity: 'two', nag: 'maybe', imageAsset: 'default', ecrRepository: 'r', tritonVersion: '24.09' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^Invalid context for the mme-deploy app:/);
    expect(message).toContain('context minCapacity must be a number, got "two".');
    expect(message).toContain('context nag must be true or false, got "maybe".');
    expect(message).toContain('imageAsset and ecrRepository exclude each other');
    expect(message).toContain('tritonVersion chooses the SageMaker Triton image');
  });

  it('ignores feature flags and CDK-internal context', () => {
    expect(settings({ '@aws-cdk/core:checkSecretUsage': true, 'aws:cdk:enable-path-metadata': true }).warnings).toEqual([]);
  });

  it('documents every key it reads', () => {
    for (const description of Object.values(APP_CONTEXT_KEYS)) expect(description.length).toBeGreaterThan(10);
  });

  it('carries every stack setting from context into the template', () => {
    const app = new App({
      context: {
        region: 'us-east-2',
        instanceType: 'ml.g5.xlarge',
        initialInstanceCount: '2',
        minCapacity: '2',
        maxCapacity: '3',
        gpuTarget: '50',
        tritonVersion: '24.05',
        bucketName: 'team-models',
        modelPrefix: 'prod/',
        endpointName: 'prod-mme',
        alarmTopicArn: 'arn:aws:sns:us-east-2:111122223333:oncall',
        modelRepositories: '',
      },
    });
    const s = readAppContext(app.node);
    const stack = new TritonMmeStack(app, s.stackName, { ...s.stackProps, env: { region: s.region, account: '111122223333' } });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: {
        Image: '763104351884.dkr.ecr.us-east-2.amazonaws.com/sagemaker-tritonserver:24.05-py3',
        ModelDataUrl: 's3://team-models/prod/',
      },
    });
    template.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      ProductionVariants: [Match.objectLike({ InstanceType: 'ml.g5.xlarge', InitialInstanceCount: 2 })],
    });
    template.hasResourceProperties('AWS::SageMaker::Endpoint', { EndpointName: 'prod-mme' });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 2, MaxCapacity: 3 });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({ TargetValue: 50 }),
    });
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: ['arn:aws:sns:us-east-2:111122223333:oncall'] });
    template.resourceCountIs('AWS::S3::Bucket', 0);
  });

  it('builds the image from the project Dockerfile or an ECR repository when asked', () => {
    const asset = readAppContext(new App({ context: { imageAsset: 'default' } }).node);
    const app = new App();
    const stack = new TritonMmeStack(app, 'A', { ...asset.stackProps, modelRepositories: [] });
    expect(stack.endpoint.tritonVersion).toBe('24.09');
    expect(stack.node.findAll().some((c) => c.node.id === 'TritonImageAsset')).toBe(true);

    const ecrSettings = readAppContext(new App({ context: { ecrRepository: 'my-triton', imageTag: 'v2' } }).node);
    const app2 = new App();
    const stack2 = new TritonMmeStack(app2, 'B', ecrSettings.stackProps);
    expect(JSON.stringify(stack2.resolve(stack2.endpoint.cfnModel.primaryContainer))).toContain('/my-triton:v2');
  });
});
