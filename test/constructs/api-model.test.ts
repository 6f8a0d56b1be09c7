// Every SageMaker and Application Auto Scaling resource the constructs synthesize, checked against the services' own
// API models (test/constructs/api-model.ts): what synthesizes and passes cfn-lint must also be what SageMaker and
// Application Auto Scaling accept.

import { join } from 'node:path';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import fc from 'fast-check';
import { EXAMPLE_PROPS, ExistingAppStack } from '../../examples/existing-app/existing-app-stack';
import { readAppContext } from '../../constructs/app-context';
import {
  CapacitySize,
  EndpointDeployment,
  InstanceType,
  ModelArchive,
  TrafficRouting,
  TritonMmeStack,
  TritonMultiModelEndpoint,
} from '../../constructs';
import { targetModelProblems } from '../../lib/repository/mme-rules';
import { versionedTargetModel } from '../../lib/bundle/target-model-name';
import { ApiModels, botocoreDataDir, formatFindings, INSTALL_BOTOCORE, MODEL_UPDATES, RESOURCE_APIS } from './api-model';

const root = join(__dirname, '..', '..');
const dataDir = botocoreDataDir();
// .ci/run installs python3-botocore and sets CI: there a missing model is a failure, not a silent skip.
if (!dataDir && process.env.CI) throw new Error(`botocore's API models are required in CI: ${INSTALL_BOTOCORE}`);
const describeWithModels = dataDir ? describe : describe.skip;
const models = dataDir ? new ApiModels(dataDir) : undefined;

// The two apps that pack examples/sentiment_onnx share an assembly directory: the one synthesized second finds the
// archive the first staged (cached by content, as `cdk synth` finds it in cdk.out) instead of packing it again.
const archives = mkdtempSync(join(tmpdir(), 'mme-api-model-'));
afterAll(() => rmSync(archives, { recursive: true, force: true }));

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>; Outputs?: Record<string, unknown> };

function templateOf(stack: Stack): Template {
  return App.of(stack)!.synth().getStackByName(stack.stackName).template as Template;
}

/** The default app: bin/app.ts's stack with cdk.json's context (the example ensemble packed at synth). */
function defaultApp(): Stack {
  const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  const context = { ...cdkJson.context, modelRepositories: [join(root, 'examples', 'sentiment_onnx')] };
  const app = new App({ context, outdir: archives });
  const settings = readAppContext(app.node);
  return new TritonMmeStack(app, settings.stackName, settings.stackProps);
}

/** An endpoint of 4 instances with a deployment, autoscaling of every kind and a dashboard. */
function endpointWith(deployment: EndpointDeployment | undefined): Stack {
  const stack = new Stack(new App(), 'D');
  const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { initialInstanceCount: 4, deployment });
  const scaling = endpoint.autoScaleInstanceCount({ minCapacity: 4, maxCapacity: 8 });
  scaling.scaleOnGpuUtilization('Gpu');
  scaling.scaleOnInvocations('Invocations', { maxRequestsPerSecond: 10 });
  scaling.scaleOnMetric('Step', {
    metric: endpoint.metricGpuMemoryUtilization(),
    scalingSteps: [{ upper: 30, change: -1 }, { lower: 80, change: +2 }],
  });
  scaling.scaleOnSchedule('Nightly', { schedule: appscaling.Schedule.cron({ hour: '2', minute: '0' }), maxCapacity: 4 });
  endpoint.addDashboard('Dashboard');
  return stack;
}

/**
 * endpointWith's template, synthesized once per deployment case and shared: the case itself checks it as is, the
 * tests that break it on purpose each break their own copy.
 */
const endpointTemplates = new Map<EndpointDeployment | undefined, Template>();
function endpointTemplate(deployment: EndpointDeployment | undefined): Template {
  if (!endpointTemplates.has(deployment)) endpointTemplates.set(deployment, templateOf(endpointWith(deployment)));
  return structuredClone(endpointTemplates.get(deployment)!);
}

const BLUE_GREEN = EndpointDeployment.blueGreen();
const DEPLOYMENTS: Array<[string, EndpointDeployment | undefined]> = [
  ['no deployment config', undefined],
  ['blueGreen()', BLUE_GREEN],
  [
    'blueGreen(allAtOnce)',
    EndpointDeployment.blueGreen({ trafficRouting: TrafficRouting.allAtOnce(), terminationWait: Duration.minutes(5) }),
  ],
  [
    'blueGreen(canary)',
    EndpointDeployment.blueGreen({
      trafficRouting: TrafficRouting.canary(CapacitySize.instances(1), Duration.minutes(10)),
      maximumExecutionTimeout: Duration.hours(8),
    }),
  ],
  [
    'blueGreen(linear)',
    EndpointDeployment.blueGreen({ trafficRouting: TrafficRouting.linear(CapacitySize.percent(25), Duration.minutes(5)) }),
  ],
  [
    'rolling',
    EndpointDeployment.rolling({
      maximumBatchSize: CapacitySize.percent(25),
      bake: Duration.minutes(5),
      rollbackMaximumBatchSize: CapacitySize.instances(2),
    }),
  ],
];

describeWithModels('synthesized templates against the SageMaker and Application Auto Scaling API models', () => {
  const cases: Array<[string, () => Template]> = [
    ['the default app (cdk.json)', () => templateOf(defaultApp())],
    ...DEPLOYMENTS.map(([name, deployment]): [string, () => Template] => [`an endpoint with ${name}`, () => endpointTemplate(deployment)]),
    ['examples/existing-app', () => templateOf(new ExistingAppStack(new App(), 'RecommendationsMme', EXAMPLE_PROPS))],
    [
      'an endpoint with every optional setting of the variant',
      () => {
        const stack = new Stack(new App(), 'Variant');
        new TritonMultiModelEndpoint(stack, 'Mme', {
          instanceType: InstanceType.P3_2XLARGE,
          initialInstanceCount: 2,
          variantName: 'blue-1',
          endpointName: 'Triton-Mme-1',
          containerStartupHealthCheckTimeout: Duration.minutes(60),
          modelDataDownloadTimeout: Duration.minutes(1),
          autoRollbackAlarms: [cloudwatch.Alarm.fromAlarmName(stack, 'A', 'oncall-latency')],
          tags: { team: 'ml' },
        });
        return templateOf(stack);
      },
    ],
  ];

  for (const [name, build] of cases) {
    it(`${name}: every resource is a request the API accepts`, () => {
      const report = models!.checkTemplate(build());
      expect(formatFindings(report.errors)).toBe('');
      // Lenient on what the 2022 model does not know, but not silent: a new member needs its MODEL_UPDATES entry.
      expect(formatFindings(report.unknown)).toBe('');
      expect(report.checked['AWS::SageMaker::Endpoint']).toBe(1);
    });
  }

  it('checks the scaling resources too (target, target tracking, step scaling, a scheduled action)', () => {
    const template = endpointTemplate(BLUE_GREEN);
    const report = models!.checkTemplate(template);
    expect(report.checked).toEqual({
      'AWS::SageMaker::Model': 1,
      'AWS::SageMaker::EndpointConfig': 1,
      'AWS::SageMaker::Endpoint': 1,
      'AWS::ApplicationAutoScaling::ScalableTarget': 1,
      'AWS::ApplicationAutoScaling::ScalingPolicy': 4, // GPU, invocations, and the step scaling's two
    });
    // A scheduled action outside the API's capacity type is refused through PutScheduledAction.
    const target = Object.values(template.Resources).find((r) => r.Type === 'AWS::ApplicationAutoScaling::ScalableTarget')!;
    (target.Properties!.ScheduledActions as Array<Record<string, unknown>>)[0]!.ScalableTargetAction = { MaxCapacity: 'four' };
    expect(formatFindings(models!.checkTemplate(template).errors)).toMatch(
      /ScheduledActions\/0\/ScalableTargetAction\/MaxCapacity \(PutScheduledAction\): expected an integer, got "four"/,
    );
  });

  it('fails a template whose TrafficRoutingConfig lacks WaitIntervalInSeconds (which CloudFormation does not require)', () => {
    const template = endpointTemplate(BLUE_GREEN);
    const endpoint = Object.values(template.Resources).find((r) => r.Type === 'AWS::SageMaker::Endpoint')!;
    type Config = { BlueGreenUpdatePolicy: { TrafficRoutingConfiguration: Record<string, unknown> } };
    const config = endpoint.Properties!.DeploymentConfig as Config;
    expect(config.BlueGreenUpdatePolicy.TrafficRoutingConfiguration.WaitIntervalInSeconds).toEqual(expect.any(Number));
    delete config.BlueGreenUpdatePolicy.TrafficRoutingConfiguration.WaitIntervalInSeconds;
    const errors = formatFindings(models!.checkTemplate(template).errors).split('\n');
    // Both calls CloudFormation makes with it refuse it: the first deploy and every update.
    expect(errors).toEqual([
      expect.stringMatching(
        /DeploymentConfig\/BlueGreenUpdatePolicy\/TrafficRoutingConfiguration\/WaitIntervalInSeconds \(CreateEndpoint\): .* is required/,
      ),
      expect.stringMatching(/TrafficRoutingConfiguration\/WaitIntervalInSeconds \(UpdateEndpoint\): WaitIntervalInSeconds is required/),
    ]);
  });

  it('fails missing required members, values out of range, unknown enum values and bad patterns, each where it is', () => {
    const template = endpointTemplate(undefined);
    const byType = (type: string) => Object.values(template.Resources).find((r) => r.Type === type)!.Properties!;
    const variant = (byType('AWS::SageMaker::EndpointConfig').ProductionVariants as Array<Record<string, unknown>>)[0]!;
    delete variant.VariantName;
    variant.InstanceType = 'ml.g4dn.huge';
    variant.ContainerStartupHealthCheckTimeoutInSeconds = 30;
    (byType('AWS::SageMaker::Model').PrimaryContainer as Record<string, unknown>).ModelDataUrl = 'ftp://models/';
    delete byType('AWS::ApplicationAutoScaling::ScalableTarget').ScalableDimension;
    byType('AWS::SageMaker::Endpoint').Surprise = true;
    const report = models!.checkTemplate(template);
    const errors = formatFindings(report.errors);
    expect(errors).toMatch(/ProductionVariants\/0\/VariantName \(CreateEndpointConfig\): VariantName is required/);
    expect(errors).toMatch(
      /ProductionVariants\/0\/InstanceType \(CreateEndpointConfig\): "ml.g4dn.huge" is not one of the \d+ values of ProductionVariant/,
    );
    expect(errors).toMatch(/ContainerStartupHealthCheckTimeoutInSeconds \(CreateEndpointConfig\): 30 is below the minimum 60/);
    expect(errors).toMatch(
      /PrimaryContainer\/ModelDataUrl \(CreateModel\): "ftp:\/\/models\/" does not match the pattern \^?\(https\|s3\)/,
    );
    expect(errors).toMatch(/ScalableDimension \(RegisterScalableTarget\): ScalableDimension is required/);
    expect(formatFindings(report.unknown)).toMatch(/Properties\/Surprise \(CreateEndpoint\/UpdateEndpoint\): Surprise is not a member/);
  });

  it('names the source of every addition to the 2022 model, and maps only resource types the models describe', () => {
    for (const update of MODEL_UPDATES) {
      expect(update.source).toMatch(/^https:\/\/docs\.aws\.amazon\.com\/sagemaker\/latest\/APIReference\//);
    }
    for (const api of Object.values(RESOURCE_APIS)) {
      for (const operation of api.operations) expect(models!.model(api.service).operations[operation]).toBeDefined();
    }
  });
});

describeWithModels('names the constructs give SageMaker, against the API patterns', () => {
  const variantName = models ? (value: string) => models.checkValue('sagemaker', 'VariantName', value) : () => [];
  const targetModel = models ? (value: string) => models.checkValue('sagemaker-runtime', 'TargetModelHeader', value) : () => [];

  it('the endpoint accepts only variant names the VariantName pattern and length allow (anchored at both ends)', () => {
    const accepted = (name: string) => {
      try {
        new TritonMultiModelEndpoint(new Stack(new App(), 'V'), 'Mme', { initialInstanceCount: 2, variantName: name });
        return true;
      } catch {
        return false;
      }
    };
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '_', '.', ' '), maxLength: 70 }), (name) => {
        // SageMaker anchors its pattern at both ends; the model writes it anchored at the start only.
        const full = variantName(name).length === 0 && /^(?:[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62})$/.test(name);
        expect(accepted(name)).toBe(full);
      }),
      { numRuns: 40 },
    );
    expect(variantName('AllTraffic')).toEqual([]);
    expect(variantName('x'.repeat(64))).toEqual(['64 characters, more than the maximum 63']);
  });

  it("every versioned TargetModel a ModelArchive gives out matches InvokeEndpoint's TargetModel pattern", () => {
    const stack = new Stack(new App({ outdir: archives }), 'Names');
    const archive = new ModelArchive(stack, 'Models', {
      repositories: [join(root, 'examples', 'sentiment_onnx')],
      bucket: new TritonMultiModelEndpoint(stack, 'Mme', { initialInstanceCount: 2 }).bucket,
    });
    expect(archive.literalTargetModels.length).toBeGreaterThan(0);
    for (const name of archive.literalTargetModels) expect(targetModel(name)).toEqual([]);
    // Whatever the library's own TargetModel rule accepts, InvokeEndpoint accepts too.
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), fc.stringMatching(/^[0-9a-f]{64}$/), (name, sha) => {
        const versioned = `${name.replace(/\.tar\.gz$/, '')}.tar.gz`;
        if (targetModelProblems(versioned) === undefined) expect(targetModel(versioned)).toEqual([]);
        const hashed = versionedTargetModel(name, sha);
        if (targetModelProblems(hashed) === undefined) expect(targetModel(hashed)).toEqual([]);
      }),
      { numRuns: 300 },
    );
    expect(targetModel(' leading-space.tar.gz')).toEqual([expect.stringMatching(/does not match the pattern/)]);
  });
});

if (!dataDir) {
  describe('the API-model check', () => {
    it.skip(`is skipped: botocore's service models are not installed (${INSTALL_BOTOCORE})`, () => undefined);
  });
}
