// The lifecycle of an autoscaled endpoint's stack, replayed in CloudFormation's order of operations
// (lifecycle-harness.ts) with the real ScalingGuard handler: after every create, update, failed update with its
// rollback and cleanup, and delete, the stand-in's SageMaker and Application Auto Scaling state must be what the
// template in force describes.

import { App, Duration, Stack as CdkStack } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import { Template as CdkTemplate } from 'aws-cdk-lib/assertions';
import { EndpointDeployment, InstanceType, TritonMultiModelEndpoint } from '../../constructs';
import { onEvent } from '../../constructs/handlers/scaling-guard/index.js';
import { actual, Cloud, described, Handler, RollbackOrder, routeSdkTo, Stack, Template } from './lifecycle-harness';

type Shape = {
  instanceType?: InstanceType;
  variantName?: string;
  autoscaling?: boolean;
  maxCapacity?: number;
  deployment?: boolean;
};

/** The endpoint with GPU target tracking, a step policy (with its alarms) and a schedule, synthesized. */
function synth(shape: Shape = {}): Template {
  const stack = new CdkStack(new App(), 'S', { env: { account: '111122223333', region: 'eu-west-1' } });
  const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', {
    instanceType: shape.instanceType ?? InstanceType.G4DN_XLARGE,
    variantName: shape.variantName,
    initialInstanceCount: 2,
    deployment: shape.deployment ? EndpointDeployment.blueGreen() : undefined,
  });
  if (shape.autoscaling !== false) {
    const scaling = endpoint.autoScaleInstanceCount({ minCapacity: 2, maxCapacity: shape.maxCapacity ?? 4 });
    scaling.scaleOnGpuUtilization('Gpu');
    scaling.scaleOnMetric('Memory', {
      metric: endpoint.metricGpuMemoryUtilization(),
      scalingSteps: [
        { upper: 20, change: -1 },
        { lower: 90, change: +1 },
      ],
      cooldown: Duration.minutes(5),
    });
    scaling.scaleOnSchedule('Night', { schedule: appscaling.Schedule.cron({ hour: '20', minute: '0' }), maxCapacity: 2 });
  }
  return { Resources: CdkTemplate.fromStack(stack).toJSON().Resources as Template['Resources'] };
}

/** Frozen to the last member: the tests share them, and the harness works out each one's order once. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') Object.values(Object.freeze(value)).forEach(deepFreeze);
  return value;
}

const templates = new Map<string, Template>();
function template(name: string, shape: Shape): Template {
  if (!templates.has(name)) templates.set(name, deepFreeze(synth(shape)));
  return templates.get(name)!;
}
const G4DN = () => template('g4dn', {});
const G5 = () => template('g5', { instanceType: InstanceType.G5_XLARGE });
const RENAMED = () => template('renamed', { variantName: 'Blue' });
const WIDER = () => template('wider', { maxCapacity: 6 });
const PLAIN = () => template('plain', { autoscaling: false });
const PLAIN_G5 = () => template('plain-g5', { autoscaling: false, instanceType: InstanceType.G5_XLARGE });
const GUARDED = () => template('guarded', { deployment: true });
const GUARDED_RENAMED = () => template('guarded-renamed', { deployment: true, variantName: 'Blue' });

let current: { cloud: Cloud; stack: Stack };
let restoreSdk: () => void;
beforeAll(() => {
  restoreSdk = routeSdkTo(() => current);
});
afterAll(() => restoreSdk());

/** A fresh account: 60 other endpoints' targets (more than a page of DescribeScalableTargets) registered first. */
function fresh(handler: Handler = onEvent, rollbackOrder: RollbackOrder = 'template'): Stack {
  const cloud = new Cloud();
  cloud.seedOthers(60);
  const stack = new Stack(cloud, handler, rollbackOrder);
  current = { cloud, stack };
  others = cloud.othersThan(undefined);
  return stack;
}

let others: string[] = [];
function expectInForce(stack: Stack): void {
  const want = described(stack);
  expect({ journal: stack.journal, state: actual(stack, Object.keys(want.alarms)) }).toEqual({ journal: stack.journal, state: want });
  // and nothing else in the account was touched
  expect(stack.cloud.othersThan(stack.endpointName)).toEqual(others);
}

/** The resources an update touches, in order (the places a failure can happen). */
async function touched(from: () => Template, to: () => Template): Promise<string[]> {
  const stack = fresh();
  await stack.create(from());
  const start = stack.journal.length;
  expect(await stack.update(to())).toBe('UPDATE_COMPLETE');
  return stack.journal
    .slice(start)
    .filter((line) => /^(create|update|replace) /.test(line))
    .map((line) => line.split(' ')[1]!);
}

describe('the lifecycle harness itself', () => {
  it('describes a created stack as the stand-in holds it: 2..4 on g4dn, three policies, a schedule, two alarms', async () => {
    const stack = fresh();
    expect(await stack.create(G4DN())).toBe('CREATE_COMPLETE');
    const state = described(stack);
    expect(state.endpoint).toEqual({ variants: [{ VariantName: 'AllTraffic', InstanceType: 'ml.g4dn.xlarge' }] });
    expect(state.targets).toHaveLength(1);
    expect(state.targets[0]).toMatchObject({ MinCapacity: 2, MaxCapacity: 4, scheduled: { Night: expect.anything() } });
    expect(Object.keys(state.targets[0]!.policies)).toHaveLength(3);
    expect(Object.values(state.alarms).flat().every((a) => a.startsWith('policy:'))).toBe(true);
    expectInForce(stack);
  });

  it('notices lost autoscaling: a guard that only deregisters (the old design) fails the comparison after a rollback', async () => {
    const deregisterOnly: Handler = (event, clients) =>
      onEvent({ ...event, ResourceProperties: { ...event.ResourceProperties, Scaling: undefined } }, clients);
    const stack = fresh(deregisterOnly);
    await stack.create(G4DN());
    const endpoint = Object.keys(G5().Resources).find((id) => G5().Resources[id]!.Type === 'AWS::SageMaker::Endpoint')!;
    expect(await stack.update(G5(), endpoint)).toBe('UPDATE_ROLLBACK_COMPLETE');
    expect(actual(stack, []).targets).toEqual([]);
    expect(described(stack).targets).toHaveLength(1);
  });
});

describe.each<RollbackOrder>(['template', 'reverse'])('an autoscaled endpoint, rollback in %s order', (rollbackOrder) => {
  it('creates, changes the instance type, and deletes with a CloudFormation role that may not deregister', async () => {
    const stack = fresh(onEvent, rollbackOrder);
    await stack.create(G4DN());
    expectInForce(stack);
    expect(await stack.update(G5())).toBe('UPDATE_COMPLETE');
    expectInForce(stack);
    expect(described(stack).endpoint!.variants[0]!.InstanceType).toBe('ml.g5.xlarge');
    stack.cloud.cfnRoleMayDeregister = false;
    expect(await stack.delete()).toBe('DELETE_COMPLETE');
    expect(stack.cloud.endpoints.size).toBe(0);
    expect(stack.cloud.targets.size).toBe(60); // only the other endpoints' targets remain
  });

  const transitions: Array<[string, () => Template, () => Template]> = [
    ['an instance type change', G4DN, G5],
    ['an instance type change back', G5, G4DN],
    ['a variant rename', G4DN, RENAMED],
    ['a change of maxCapacity', G4DN, WIDER],
    ['autoscaling added', PLAIN, G4DN],
    ['autoscaling removed', G4DN, PLAIN],
  ];
  describe.each(transitions)('%s', (_name, from, to) => {
    it('succeeds and leaves what the new template describes', async () => {
      const stack = fresh(onEvent, rollbackOrder);
      await stack.create(from());
      expect(await stack.update(to())).toBe('UPDATE_COMPLETE');
      expectInForce(stack);
    });

    it('fails at each resource in turn, rolls back, and leaves what the old template describes', async () => {
      const places = await touched(from, to);
      expect(places.length).toBeGreaterThan(0);
      for (const place of places) {
        const stack = fresh(onEvent, rollbackOrder);
        await stack.create(from());
        expect({ place, status: await stack.update(to(), place) }).toEqual({ place, status: 'UPDATE_ROLLBACK_COMPLETE' });
        expectInForce(stack);
        // and the stack deploys the change afterwards (nothing was left behind that blocks it)
        expect({ place, status: await stack.update(to()) }).toEqual({ place, status: 'UPDATE_COMPLETE' });
        expectInForce(stack);
      }
    });
  });

  it('refuses removing autoscaling and changing the instance type in one deploy, and rolls back to the old state', async () => {
    const stack = fresh(onEvent, rollbackOrder);
    await stack.create(G4DN());
    expect(await stack.update(PLAIN_G5())).toBe('UPDATE_ROLLBACK_COMPLETE');
    expect(stack.journal.join('\n')).toMatch(/fail MmeEndpoint\w+: The variant AllTraffic is registered as a scalable target/);
    expectInForce(stack);
    // the documented two-step path
    expect(await stack.update(PLAIN())).toBe('UPDATE_COMPLETE');
    expect(await stack.update(PLAIN_G5())).toBe('UPDATE_COMPLETE');
    expectInForce(stack);
  });

  it('refuses a variant rename under a deployment configuration before deregistering anything', async () => {
    const stack = fresh(onEvent, rollbackOrder);
    await stack.create(GUARDED());
    expect(await stack.update(GUARDED_RENAMED())).toBe('UPDATE_ROLLBACK_COMPLETE');
    const failure = stack.journal.find((line) => line.startsWith('fail '))!;
    expect(failure).toMatch(/^fail MmeScalingGuard\w+: The variant AllTraffic of endpoint \S+ cannot be renamed to Blue/);
    expectInForce(stack);
  });
});
