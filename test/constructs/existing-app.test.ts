import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { EXAMPLE_PROPS, ExistingAppStack } from '../../examples/existing-app/existing-app-stack';
import { synthWithNag } from './nag-report';

describe('examples/existing-app', () => {
  const outcome = synthWithNag((app) => new ExistingAppStack(app, 'RecommendationsMme', EXAMPLE_PROPS));

  it('synthesizes with zero unacknowledged cdk-nag AwsSolutions findings', () => {
    expect(outcome.error).toBeUndefined();
    expect(outcome.findings).toEqual([]);
  });

  it('acknowledges only the wildcards the constructs explain', () => {
    expect(outcome.acknowledged.map((a) => a.rule).sort()).toEqual([
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:eu-west-1:111122223333:log-group:/aws/sagemaker/Endpoints/*]',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::acme-ml-models/recommendations/*]',
      // Not cdk-nag's: aws-cdk-lib's template validation on Fn::GetAtt EndpointName, a documented attribute.
      'CloudFormation-Validate::E9004',
      'CloudFormation-Validate::F6101',
    ]);
    for (const a of outcome.acknowledged) expect(a.reason!.length).toBeGreaterThan(60);
  });

  it('puts the model in the existing private subnets and reads the existing bucket with its key', () => {
    const template = Template.fromJSON(outcome.templates.RecommendationsMme);
    template.resourceCountIs('AWS::S3::Bucket', 0);
    template.resourceCountIs('AWS::EC2::VPC', 0);
    template.hasResourceProperties('AWS::SageMaker::Model', {
      VpcConfig: { Subnets: EXAMPLE_PROPS.privateSubnetIds },
      PrimaryContainer: {
        ModelDataUrl: 's3://acme-ml-models/recommendations/',
        Image: '763104351884.dkr.ecr.eu-west-1.amazonaws.com/sagemaker-tritonserver:24.09-py3',
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Action: 'kms:Decrypt', Resource: EXAMPLE_PROPS.modelBucketKeyArn })]),
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: ['recommendations-api'],
      PolicyDocument: { Statement: [Match.objectLike({ Action: 'sagemaker:InvokeEndpoint' })] },
    });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 2, MaxCapacity: 6 });
  });
});

describe('examples/existing-app warnings', () => {
  it('acknowledges the VPC egress advice with its reason, leaving no warning', () => {
    const stack = new ExistingAppStack(new App(), 'RecommendationsMme', EXAMPLE_PROPS);
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('reaches S3, ECR and CloudWatch'))).toEqual([]);
  });
});

describe('the cdk-nag harness', () => {
  it('reports findings it is given (a bucket without logs or TLS)', () => {
    const outcome = synthWithNag((app) => new s3.Bucket(new Stack(app, 'Plain'), 'Bucket'));
    expect(outcome.error).toMatch(/AwsSolutions-S1/);
    expect(outcome.findings.map((f) => f.rule)).toEqual(expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']));
  });
});
