import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { EndpointDeployment, TritonMmeStack, TritonMultiModelEndpoint } from '../../constructs';
import { synthWithNag } from './nag-report';

function stack(): Stack {
  return new Stack(new App(), 'S', { env: { account: '111122223333', region: 'eu-west-1' } });
}

type Statement = { Action: string | string[]; Resource: unknown };
function policyOf(template: Template, logicalIdPrefix: string): { Roles: unknown[]; Statement: Statement[] } {
  const [policy] = Object.entries(template.findResources('AWS::IAM::Policy'))
    .filter(([id]) => id.startsWith(logicalIdPrefix))
    .map(([, r]) => (r as { Properties: { Roles: unknown[]; PolicyDocument: { Statement: Statement[] } } }).Properties);
  return { Roles: policy!.Roles, Statement: policy!.PolicyDocument.Statement };
}

describe('the execution role', () => {
  it('is a new role by default, with the endpoint rights in a policy of their own', () => {
    const s = stack();
    const endpoint = new TritonMultiModelEndpoint(s, 'Mme');
    const template = Template.fromStack(s);
    template.resourceCountIs('AWS::IAM::Role', 1);
    expect(policyOf(template, 'MmeExecutionPolicy').Roles).toEqual([{ Ref: expect.stringMatching(/^MmeRole/) }]);
    expect(endpoint.grantPrincipal).toBe(endpoint.role.grantPrincipal);
  });

  it('can be an imported role: the policy attaches to it by name and grants to the endpoint reach it', () => {
    const s = stack();
    const role = iam.Role.fromRoleArn(s, 'Existing', 'arn:aws:iam::111122223333:role/ml-serving');
    const endpoint = new TritonMultiModelEndpoint(s, 'Mme', { role });
    s3.Bucket.fromBucketName(s, 'Features', 'feature-store').grantRead(endpoint);
    const template = Template.fromStack(s);
    template.resourceCountIs('AWS::IAM::Role', 0);
    const execution = policyOf(template, 'MmeExecutionPolicy');
    expect(execution.Roles).toEqual(['ml-serving']);
    expect(execution.Statement).toEqual(expect.arrayContaining([expect.objectContaining({ Action: 's3:GetObject' })]));
    template.hasResourceProperties('AWS::SageMaker::Model', { ExecutionRoleArn: 'arn:aws:iam::111122223333:role/ml-serving' });
    // The grant to the endpoint goes to the role's own policy, not to the execution policy.
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: ['ml-serving'],
      PolicyDocument: { Statement: [Match.objectLike({ Action: Match.arrayWith(['s3:GetObject*']) })] },
    });
  });

  it('warns when an imported role is immutable, naming what it must already allow', () => {
    const s = stack();
    const role = iam.Role.fromRoleArn(s, 'Existing', 'arn:aws:iam::111122223333:role/locked', { mutable: false });
    new TritonMultiModelEndpoint(s, 'Mme', { role, initialInstanceCount: 2 });
    Annotations.fromStack(s).hasWarning('/S/Mme', Match.stringLikeRegexp('imported as immutable.*s3:GetObject'));
    Template.fromStack(s).resourceCountIs('AWS::IAM::Policy', 0);
  });

  it("lists every action the endpoint needs in the immutable role's warning: VPC, KMS and rollback alarms included", () => {
    const s = stack();
    const role = iam.Role.fromRoleArn(s, 'Existing', 'arn:aws:iam::111122223333:role/locked', { mutable: false });
    const vpc = new ec2.Vpc(s, 'Vpc', { maxAzs: 2, natGateways: 0 });
    const key = new kms.Key(s, 'Key');
    const endpoint = new TritonMultiModelEndpoint(s, 'Mme', {
      role,
      vpc,
      modelBucketEncryptionKey: key,
      initialInstanceCount: 2,
      deployment: EndpointDeployment.blueGreen(),
    });
    endpoint.addDashboard('Dashboard'); // after the endpoint: its rollback alarms must still be in the warning
    const [warning] = Annotations.fromStack(s).findWarning('/S/Mme', Match.stringLikeRegexp('imported as immutable'));
    const listed = /already allow: ([^(]*) \(/.exec(String(warning!.entry.data))![1]!.split(', ');
    expect(listed).toEqual([
      'cloudwatch:DescribeAlarms',
      'cloudwatch:PutMetricData',
      'ec2:CreateNetworkInterface',
      'ec2:CreateNetworkInterfacePermission',
      'ec2:DeleteNetworkInterface',
      'ec2:DeleteNetworkInterfacePermission',
      'ec2:DescribeDhcpOptions',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSecurityGroups',
      'ec2:DescribeSubnets',
      'ec2:DescribeVpcs',
      'ecr:BatchCheckLayerAvailability',
      'ecr:BatchGetImage',
      'ecr:GetAuthorizationToken',
      'ecr:GetDownloadUrlForLayer',
      'kms:Decrypt',
      'logs:CreateLogGroup',
      'logs:CreateLogStream',
      'logs:DescribeLogStreams',
      'logs:PutLogEvents',
      's3:GetObject',
      's3:ListBucket',
    ]);
  });
});

describe('aws-cdk-lib interoperation', () => {
  it('is a sagemaker.IEndpoint that apigateway.SagemakerIntegration takes', () => {
    const s = stack();
    const endpoint: sagemaker.IEndpoint = new TritonMultiModelEndpoint(s, 'Mme');
    const api = new apigateway.RestApi(s, 'Api');
    api.root.addResource('invoke').addMethod('POST', new apigateway.SagemakerIntegration(endpoint));
    const template = Template.fromStack(s);
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      Integration: {
        Type: 'AWS',
        IntegrationHttpMethod: 'POST',
        Uri: { 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('runtime.sagemaker:path/endpoints/'), '/invocations'])] },
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [{ Action: 'sagemaker:InvokeEndpoint', Effect: 'Allow', Resource: { Ref: Match.stringLikeRegexp('^MmeEndpoint') } }],
      },
    });
    expect(s.resolve(endpoint.endpointRef.endpointArn)).toEqual({ Ref: expect.stringMatching(/^MmeEndpoint/) });
  });

  it('imports an endpoint by ARN (name from the ARN), by name (ARN formatted) or by both', () => {
    const s = stack();
    const byArn = TritonMultiModelEndpoint.fromEndpointArn(s, 'A', 'arn:aws:sagemaker:eu-west-1:111122223333:endpoint/recs-mme');
    expect(byArn.endpointName).toBe('recs-mme');
    expect(byArn.variantName).toBe('AllTraffic');
    const byName = TritonMultiModelEndpoint.fromEndpointName(s, 'B', 'Recs-MME', { variantName: 'Blue' });
    expect(s.resolve(byName.endpointArn)).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:eu-west-1:111122223333:endpoint/recs-mme']],
    });
    const both = TritonMultiModelEndpoint.fromEndpointAttributes(s, 'C', {
      endpointName: 'Recs-MME',
      endpointArn: 'arn:aws:sagemaker:eu-west-1:111122223333:endpoint/recs-mme',
    });
    expect(both.endpointName).toBe('Recs-MME');
    expect(both.metricGpuUtilization().dimensions).toEqual({ EndpointName: 'Recs-MME', VariantName: 'AllTraffic' });
    expect(() => TritonMultiModelEndpoint.fromEndpointAttributes(s, 'D', {})).toThrow(/needs endpointName or endpointArn/);
  });
});

describe('cdk-nag acknowledgments', () => {
  it("cover only the endpoint's own statements: s3:GetObject on * added to the role later fails AwsSolutions", () => {
    const outcome = synthWithNag((app) => {
      const s = new TritonMmeStack(app, 'TritonMme');
      s.endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['*'] }));
    });
    expect(outcome.error).toMatch(/AwsSolutions-IAM5/);
    expect(outcome.findings).toEqual([
      { rule: 'AwsSolutions-IAM5[Resource::*]', paths: ['TritonMme/Endpoint/Role/DefaultPolicy/Resource'] },
    ]);
  });

  it('would not hide the same wildcard if it were added to the execution policy under another resource', () => {
    const outcome = synthWithNag((app) => {
      const s = new TritonMmeStack(app, 'TritonMme');
      s.endpoint.executionPolicy.addStatements(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::other/*'] }));
    });
    expect(outcome.findings.map((f) => f.rule)).toEqual(['AwsSolutions-IAM5[Resource::arn:aws:s3:::other/*]']);
  });
});
