import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { TritonMmeStack } from '../../constructs';
import { synthWithNag } from './nag-report';

const cdkJson = JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
const featureFlags = Object.fromEntries(Object.entries(cdkJson.context).filter(([k]) => k.startsWith('@aws-cdk/')));

describe('TritonMmeStack without model repositories', () => {
  const outcome = synthWithNag((app) => new TritonMmeStack(app, 'TritonMme'), featureFlags);
  const template = Template.fromJSON(outcome.templates.TritonMme);

  it('passes cdk-nag AwsSolutions with no unacknowledged finding', () => {
    expect(outcome.error).toBeUndefined();
    expect(outcome.findings).toEqual([]);
  });

  it('acknowledges only the wildcards the constructs explain, at the policy or function that has them, with reasons', () => {
    expect(outcome.acknowledged.map((a) => `${a.paths.join()} ${a.rule}`).sort()).toEqual([
      'TritonMme/Custom::MmeDeployScalingGuardCustomResourceProvider ' +
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'TritonMme/Custom::MmeDeployScalingGuardCustomResourceProvider AwsSolutions-IAM5[Resource::*]',
      // aws-cdk-lib's template validation on Fn::GetAtt EndpointName, a documented attribute its schema lacks.
      'TritonMme/Endpoint CloudFormation-Validate::E9004',
      'TritonMme/Endpoint CloudFormation-Validate::F6101',
      'TritonMme/Endpoint/ExecutionPolicy AwsSolutions-IAM5[Resource::*]',
      'TritonMme/Endpoint/ExecutionPolicy AwsSolutions-IAM5[Resource::<EndpointModelBucketEFAB4E94.Arn>/models/*]',
      'TritonMme/Endpoint/ExecutionPolicy ' +
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/sagemaker/Endpoints/*]',
    ]);
    for (const a of outcome.acknowledged) expect(a.reason!.length).toBeGreaterThan(60);
  });

  it('holds the endpoint, its autoscaling (1..5 on GPU at 60 %), dashboard, alarms and logged bucket', () => {
    const types = Object.values(template.toJSON().Resources as Record<string, { Type: string }>)
      .map((r) => r.Type)
      .sort();
    expect(types).toEqual(
      [
        'AWS::ApplicationAutoScaling::ScalableTarget',
        'AWS::ApplicationAutoScaling::ScalingPolicy',
        'AWS::CloudWatch::Alarm',
        'AWS::CloudWatch::Alarm',
        'AWS::CloudWatch::Alarm',
        'AWS::CloudWatch::Alarm',
        'AWS::CloudWatch::Alarm',
        'AWS::CloudWatch::Dashboard',
        'AWS::IAM::Policy',
        'AWS::IAM::Role',
        'AWS::IAM::Role',
        'AWS::Lambda::Function',
        'Custom::MmeDeployScalingGuard', // before the endpoint
        'Custom::MmeDeployScalingGuard', // after it
        'AWS::S3::Bucket',
        'AWS::S3::Bucket',
        'AWS::S3::BucketPolicy',
        'AWS::S3::BucketPolicy',
        'AWS::SageMaker::Endpoint',
        'AWS::SageMaker::EndpointConfig',
        'AWS::SageMaker::Model',
      ].sort(),
    );
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 1, MaxCapacity: 5 });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: { TargetValue: 60, ScaleInCooldown: 600, ScaleOutCooldown: 200 },
    });
    template.hasResourceProperties('AWS::S3::Bucket', {
      LoggingConfiguration: { DestinationBucketName: { Ref: Match.stringLikeRegexp('^AccessLogs') }, LogFilePrefix: 'TritonMme-Endpoint/' },
    });
  });

  it('outputs the endpoint name, dashboard, ModelDataUrl and bucket', () => {
    expect(Object.keys(template.toJSON().Outputs).sort()).toEqual(['DashboardName', 'EndpointName', 'ModelBucketName', 'ModelDataUrl']);
  });
});

describe('TritonMmeStack with the example repository (the app default)', () => {
  const example = join(__dirname, '..', '..', 'examples', 'sentiment_onnx');
  const outcome = synthWithNag((app) => new TritonMmeStack(app, 'TritonMme', { modelRepositories: [example] }), featureFlags);
  const template = Template.fromJSON(outcome.templates.TritonMme);

  it('passes cdk-nag AwsSolutions, acknowledging only the managed log policy of the archive functions', () => {
    expect(outcome.error).toBeUndefined();
    expect(outcome.findings).toEqual([]);
    expect(outcome.acknowledged.map((a) => `${a.paths.join()} ${a.rule.slice(0, 30)}`).sort()).toEqual([
      'TritonMme/Custom::MmeDeployArchiveCopyCustomResourceProvider AwsSolutions-IAM4[Policy::arn:',
      'TritonMme/Custom::MmeDeployArchiveRetentionCustomResourceProvider AwsSolutions-IAM4[Policy::arn:',
      'TritonMme/Custom::MmeDeployScalingGuardCustomResourceProvider AwsSolutions-IAM4[Policy::arn:',
      'TritonMme/Custom::MmeDeployScalingGuardCustomResourceProvider AwsSolutions-IAM5[Resource::*]',
      'TritonMme/Endpoint CloudFormation-Validate::E9004',
      'TritonMme/Endpoint CloudFormation-Validate::F6101',
      'TritonMme/Endpoint/ExecutionPolicy AwsSolutions-IAM5[Resource::*]',
      'TritonMme/Endpoint/ExecutionPolicy AwsSolutions-IAM5[Resource::<E',
      'TritonMme/Endpoint/ExecutionPolicy AwsSolutions-IAM5[Resource::ar',
    ]);
    for (const a of outcome.acknowledged) expect(a.reason!.length).toBeGreaterThan(60);
  });

  it('copies sentiment_onnx-<hash>.tar.gz under the endpoint prefix and outputs its TargetModel once copied', () => {
    template.hasResourceProperties('Custom::MmeDeployArchiveCopy', {
      Key: Match.stringLikeRegexp('^models/sentiment_onnx-[0-9a-f]{12}\\.tar\\.gz$'),
      TargetModel: Match.stringLikeRegexp('^sentiment_onnx-[0-9a-f]{12}\\.tar\\.gz$'),
    });
    const [copy] = Object.keys(template.findResources('Custom::MmeDeployArchiveCopy'));
    const [retention] = Object.keys(template.findResources('Custom::MmeDeployArchiveRetention'));
    expect(template.toJSON().Outputs.TargetModels.Value).toEqual({ 'Fn::GetAtt': [copy, 'TargetModel'] });
    expect(template.toJSON().Outputs.ArchiveCleanup.Value).toEqual({ 'Fn::GetAtt': [retention, 'Problems'] });
  });
});
