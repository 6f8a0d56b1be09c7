import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { IMultiModelEndpoint, TritonMultiModelEndpoint } from '../../constructs';

// Metrics are plain objects: no synthesis needed, only token resolution.
const app = new App();
const stack = new Stack(app, 'S', { env: { region: 'us-east-1', account: '111122223333' } });
const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { initialInstanceCount: 2 });
const imported = TritonMultiModelEndpoint.fromEndpointName(stack, 'Imported', 'My-Endpoint', { variantName: 'Blue' });

const expected: Array<[keyof IMultiModelEndpoint, string, string, string]> = [
  ['metricGpuUtilization', '/aws/sagemaker/Endpoints', 'GPUUtilization', 'Average'],
  ['metricGpuMemoryUtilization', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', 'Average'],
  ['metricCpuUtilization', '/aws/sagemaker/Endpoints', 'CPUUtilization', 'Average'],
  ['metricMemoryUtilization', '/aws/sagemaker/Endpoints', 'MemoryUtilization', 'Average'],
  ['metricDiskUtilization', '/aws/sagemaker/Endpoints', 'DiskUtilization', 'Average'],
  ['metricLoadedModelCount', '/aws/sagemaker/Endpoints', 'LoadedModelCount', 'Average'],
  ['metricModelLoadingWaitTime', 'AWS/SageMaker', 'ModelLoadingWaitTime', 'Average'],
  ['metricModelLoadingTime', 'AWS/SageMaker', 'ModelLoadingTime', 'Average'],
  ['metricModelUnloadingTime', 'AWS/SageMaker', 'ModelUnloadingTime', 'Average'],
  ['metricModelDownloadingTime', 'AWS/SageMaker', 'ModelDownloadingTime', 'Average'],
  ['metricModelCacheHit', 'AWS/SageMaker', 'ModelCacheHit', 'Average'],
  ['metricInvocations', 'AWS/SageMaker', 'Invocations', 'Sum'],
  ['metricInvocationsPerInstance', 'AWS/SageMaker', 'InvocationsPerInstance', 'Sum'],
  ['metricModelLatency', 'AWS/SageMaker', 'ModelLatency', 'Average'],
  ['metricOverheadLatency', 'AWS/SageMaker', 'OverheadLatency', 'Average'],
  ['metricInvocation4XXErrors', 'AWS/SageMaker', 'Invocation4XXErrors', 'Sum'],
  ['metricInvocation5XXErrors', 'AWS/SageMaker', 'Invocation5XXErrors', 'Sum'],
];

describe('multi-model endpoint metrics', () => {
  it.each(expected)('%s is %s %s (%s) per endpoint and variant', (method, namespace, metricName, statistic) => {
    const metric = (endpoint[method] as (p?: object) => import('aws-cdk-lib/aws-cloudwatch').Metric).call(endpoint);
    expect(metric.namespace).toBe(namespace);
    expect(metric.metricName).toBe(metricName);
    expect(metric.statistic).toBe(statistic);
    expect(stack.resolve(metric.dimensions)).toEqual({
      EndpointName: { 'Fn::GetAtt': [expect.stringMatching(/^MmeEndpoint/), 'EndpointName'] },
      VariantName: 'AllTraffic',
    });
  });

  it('lets callers override statistic and period', () => {
    const metric = endpoint.metricModelLatency({ statistic: 'p99', period: Duration.minutes(1) });
    expect([metric.statistic, metric.period.toSeconds()]).toEqual(['p99', 60]);
  });

  it('watches an imported endpoint by name and variant', () => {
    const metric = imported.metricGpuUtilization();
    expect(metric.dimensions).toEqual({ EndpointName: 'My-Endpoint', VariantName: 'Blue' });
    expect(stack.resolve(imported.endpointArn)).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:111122223333:endpoint/my-endpoint']],
    });
  });

  it('defaults the imported variant to AllTraffic and grants InvokeEndpoint on its lower-case ARN', () => {
    const other = TritonMultiModelEndpoint.fromEndpointName(stack, 'Other', 'Other');
    expect(other.variantName).toBe('AllTraffic');
    const role = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
    other.grantInvoke(role);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Action: 'sagemaker:InvokeEndpoint',
            Effect: 'Allow',
            Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:111122223333:endpoint/other']] },
          },
        ],
      },
    });
  });
});
