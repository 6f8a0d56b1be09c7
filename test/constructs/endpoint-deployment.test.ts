import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as cdkIam from 'aws-cdk-lib/aws-iam';
import {
  CapacitySize,
  EndpointDeployment,
  TrafficRouting,
  TritonMultiModelEndpoint,
  TritonMultiModelEndpointProps,
} from '../../constructs';

function endpointIn(props: TritonMultiModelEndpointProps) {
  const stack = new Stack(new App(), 'S');
  const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { initialInstanceCount: 4, ...props });
  return { stack, endpoint };
}

function deploymentConfig(stack: Stack): Record<string, unknown> | undefined {
  const [endpoint] = Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::Endpoint')) as Array<{
    Properties: { DeploymentConfig?: Record<string, unknown> };
  }>;
  return endpoint!.Properties.DeploymentConfig;
}

describe('deployment guardrails', () => {
  it("leave the endpoint to SageMaker's default (blue/green, all at once) unless asked", () => {
    expect(deploymentConfig(endpointIn({}).stack)).toBeUndefined();
  });

  it('roll out blue/green with a canary, a termination wait and a timeout', () => {
    const { stack } = endpointIn({
      deployment: EndpointDeployment.blueGreen({
        trafficRouting: TrafficRouting.canary(CapacitySize.instances(1), Duration.minutes(10)),
        terminationWait: Duration.minutes(15),
        maximumExecutionTimeout: Duration.hours(2),
      }),
    });
    expect(deploymentConfig(stack)).toEqual({
      BlueGreenUpdatePolicy: {
        TrafficRoutingConfiguration: { Type: 'CANARY', CanarySize: { Type: 'INSTANCE_COUNT', Value: 1 }, WaitIntervalInSeconds: 600 },
        TerminationWaitInSeconds: 900,
        MaximumExecutionTimeoutInSeconds: 7200,
      },
    });
  });

  it('shift linearly in percent steps', () => {
    const { stack } = endpointIn({
      deployment: EndpointDeployment.blueGreen({ trafficRouting: TrafficRouting.linear(CapacitySize.percent(25), Duration.minutes(5)) }),
    });
    expect(deploymentConfig(stack)).toEqual({
      BlueGreenUpdatePolicy: {
        TrafficRoutingConfiguration: {
          Type: 'LINEAR',
          LinearStepSize: { Type: 'CAPACITY_PERCENT', Value: 25 },
          WaitIntervalInSeconds: 300,
        },
      },
    });
  });

  it('roll in batches with a rollback batch size', () => {
    const { stack } = endpointIn({
      deployment: EndpointDeployment.rolling({
        maximumBatchSize: CapacitySize.percent(25),
        bake: Duration.minutes(5),
        rollbackMaximumBatchSize: CapacitySize.instances(2),
      }),
    });
    expect(deploymentConfig(stack)).toEqual({
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'CAPACITY_PERCENT', Value: 25 },
        WaitIntervalInSeconds: 300,
        RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 2 },
      },
    });
  });

  it("roll back on the dashboard's 5XX and error-rate alarms by default, named without a reference cycle", () => {
    const { stack, endpoint } = endpointIn({ deployment: EndpointDeployment.blueGreen() });
    const dashboard = endpoint.addDashboard('Dashboard');
    const config = deploymentConfig(stack) as { AutoRollbackConfiguration: { Alarms: Array<{ AlarmName: unknown }> } };
    const template = Template.fromStack(stack);
    const alarmNames = (alarm: cloudwatch.Alarm) =>
      (
        template.toJSON().Resources[stack.getLogicalId(alarm.node.defaultChild as cloudwatch.CfnAlarm)] as {
          Properties: { AlarmName: string };
        }
      ).Properties.AlarmName;
    // Literal names, not references: the endpoint must not depend on alarms that depend on the endpoint's name.
    expect(config.AutoRollbackConfiguration.Alarms).toEqual([
      { AlarmName: alarmNames(dashboard.invocation5XXErrorsAlarm) },
      { AlarmName: alarmNames(dashboard.invocationErrorRateAlarm) },
    ]);
    // Not ModelLoadingWaitTime: it rises after every fleet replacement (an empty model cache), bad update or not.
    expect(dashboard.deploymentAlarms).not.toContain(dashboard.modelLoadingWaitTimeAlarm);
    expect(config.AutoRollbackConfiguration.Alarms[0]!.AlarmName).toEqual(
      expect.stringMatching(/^S-Mme-Dashboard-.*-Invocation5XXErrors$/),
    );
  });

  it('roll back on the given alarms, even without an update policy', () => {
    const { stack } = endpointIn({
      autoRollbackAlarms: [cloudwatch.Alarm.fromAlarmName(new Stack(new App(), 'Other'), 'A', 'oncall-latency')],
    });
    expect(deploymentConfig(stack)).toEqual({ AutoRollbackConfiguration: { Alarms: [{ AlarmName: 'oncall-latency' }] } });
  });

  it('bake 10 minutes after an all-at-once shift unless told otherwise (SageMaker requires WaitIntervalInSeconds)', () => {
    const routing = (deployment: EndpointDeployment) =>
      (deploymentConfig(endpointIn({ deployment }).stack) as { BlueGreenUpdatePolicy: { TrafficRoutingConfiguration: unknown } })
        .BlueGreenUpdatePolicy.TrafficRoutingConfiguration;
    expect(routing(EndpointDeployment.blueGreen())).toEqual({ Type: 'ALL_AT_ONCE', WaitIntervalInSeconds: 600 });
    expect(routing(EndpointDeployment.blueGreen({ trafficRouting: TrafficRouting.allAtOnce() }))).toEqual({
      Type: 'ALL_AT_ONCE',
      WaitIntervalInSeconds: 600,
    });
    expect(routing(EndpointDeployment.blueGreen({ trafficRouting: TrafficRouting.allAtOnce(Duration.minutes(3)) }))).toEqual({
      Type: 'ALL_AT_ONCE',
      WaitIntervalInSeconds: 180,
    });
  });

  it("refuse shares of the fleet SageMaker refuses, and a timeout shorter than the waits, in one error", () => {
    const message = (props: TritonMultiModelEndpointProps) => {
      try {
        endpointIn(props);
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    // A canary of 3 of 4 instances (75 %), a timeout shorter than bake + termination wait.
    const canary = message({
      deployment: EndpointDeployment.blueGreen({
        trafficRouting: TrafficRouting.canary(CapacitySize.instances(3), Duration.minutes(30)),
        terminationWait: Duration.minutes(30),
        maximumExecutionTimeout: Duration.minutes(50),
      }),
    });
    expect(canary.split('\n')).toEqual([
      expect.stringMatching(/^Invalid TritonMultiModelEndpoint props \(S\/Mme\):$/),
      "  - deployment maximumExecutionTimeout (50 minutes) must be longer than the deployment's bakes and termination wait " +
        '(1 hour at least), or SageMaker times out every update.',
      "  - canary size must be at most 50 % of the variant's instances (SageMaker refuses others), got 3 instances, 75 % of 4 instances.",
    ]);
    const linear = TrafficRouting.linear(CapacitySize.percent(5), Duration.minutes(1));
    expect(message({ deployment: EndpointDeployment.blueGreen({ trafficRouting: linear }) })).toContain(
      "linear step size must be 10–50 % of the variant's instances (SageMaker refuses others), got 5 %.");
    expect(message({ deployment: EndpointDeployment.rolling({ maximumBatchSize: CapacitySize.instances(4), bake: Duration.minutes(1) }) }))
      .toContain("maximumBatchSize must be 5–50 % of the variant's instances (SageMaker refuses others), got 4 instances, 100 % of " +
        '4 instances.');
    // Linear steps of 1 of 4 instances: four bakes of 10 minutes do not fit in 30 minutes.
    expect(
      message({
        deployment: EndpointDeployment.blueGreen({
          trafficRouting: TrafficRouting.linear(CapacitySize.instances(1), Duration.minutes(10)),
          maximumExecutionTimeout: Duration.minutes(30),
        }),
      }),
    ).toContain('must be longer than the deployment\'s bakes and termination wait (40 minutes at least)');
    // One instance: only all at once.
    expect(
      message({
        initialInstanceCount: 1,
        deployment: EndpointDeployment.rolling({ maximumBatchSize: CapacitySize.percent(50), bake: Duration.minutes(1) }),
      }),
    ).toContain(
      'maximumBatchSize 50 % cannot be a share of a 1-instance fleet: a canary, linear or rolling deployment needs at least 2 instances.',
    );
    expect(message({ initialInstanceCount: 1, deployment: EndpointDeployment.blueGreen() })).toBe('');
    // Within SageMaker's shares: accepted.
    expect(
      message({
        deployment: EndpointDeployment.blueGreen({
          trafficRouting: TrafficRouting.linear(CapacitySize.instances(2), Duration.minutes(5)),
          maximumExecutionTimeout: Duration.minutes(11),
        }),
      }),
    ).toBe('');
  });

  it('let the execution role read the rollback alarms (cloudwatch:DescribeAlarms on exactly those)', () => {
    const { stack, endpoint } = endpointIn({ deployment: EndpointDeployment.blueGreen() });
    const dashboard = endpoint.addDashboard('Dashboard');
    const statements = Template.fromStack(stack).toJSON().Resources[
      stack.getLogicalId(endpoint.executionPolicy.node.defaultChild as cdkIam.CfnPolicy)
    ].Properties.PolicyDocument.Statement as Array<{ Action: unknown; Resource: unknown }>;
    const describe = statements.filter((st) => st.Action === 'cloudwatch:DescribeAlarms');
    expect(describe).toHaveLength(1);
    expect(JSON.stringify(describe[0]!.Resource)).toContain(`:alarm:${dashboard.deploymentAlarmNames[0]}`);
    expect(JSON.stringify(describe[0]!.Resource)).toContain(`:alarm:${dashboard.deploymentAlarmNames[1]}`);

    const given = endpointIn({ autoRollbackAlarms: [cloudwatch.Alarm.fromAlarmName(new Stack(new App(), 'O'), 'A', 'oncall-latency')] });
    const resources = JSON.stringify(Template.fromStack(given.stack).toJSON());
    expect(resources).toMatch(/"Action":"cloudwatch:DescribeAlarms","Effect":"Allow","Resource":\{"Fn::Join":\[.*:alarm:oncall-latency"/);
    // Without rollback alarms there is nothing to read.
    const none = endpointIn({});
    none.endpoint.addDashboard('Dashboard');
    expect(JSON.stringify(Template.fromStack(none.stack).toJSON())).not.toContain('cloudwatch:DescribeAlarms');
  });

  it('reject out-of-range waits, sizes and more than ten alarms, in one error', () => {
    const other = new Stack(new App(), 'Other');
    const alarms = Array.from({ length: 11 }, (_, i) => cloudwatch.Alarm.fromAlarmName(other, `A${i}`, `a${i}`));
    let message = '';
    try {
      endpointIn({
        deployment: EndpointDeployment.blueGreen({
          trafficRouting: TrafficRouting.canary(CapacitySize.percent(150), Duration.hours(2)),
          terminationWait: Duration.hours(2),
          maximumExecutionTimeout: Duration.minutes(1),
        }),
        autoRollbackAlarms: alarms,
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('autoRollbackAlarms holds 11 alarms; SageMaker takes at most 10.');
    expect(message).toContain('canary size must be a whole percentage from 1 to 100, got 150.');
    expect(message).toContain('deployment traffic routing bake time must be a whole number of seconds from 0 to 3600, got 2 hours.');
    expect(message).toContain('deployment terminationWait must be a whole number of seconds from 0 to 3600, got 2 hours.');
    expect(message).toContain('deployment maximumExecutionTimeout must be a whole number of seconds from 600 to 28800, got 1 minute.');
    expect(() =>
      endpointIn({ deployment: EndpointDeployment.rolling({ maximumBatchSize: CapacitySize.instances(0), bake: Duration.seconds(0) }) }),
    ).toThrow(/maximumBatchSize must be a whole number of instances of at least 1, got 0/);
  });
});
