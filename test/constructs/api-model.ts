// The SageMaker and Application Auto Scaling resources of a synthesized CloudFormation template, checked against the
// services' own API models: botocore's service-2.json (Debian's python3-botocore, which .ci/run installs), the same
// data the AWS SDKs are generated from. CloudFormation's resource schemas leave out some of what the API requires
// (TrafficRoutingConfig.WaitIntervalInSeconds is required by SageMaker, optional in the resource schema), so cfn-lint
// passes templates that CreateEndpoint or UpdateEndpoint then refuse; this check catches those offline.
//
// Each resource becomes the API requests CloudFormation makes with it (AWS::SageMaker::Endpoint → CreateEndpoint and,
// on update, UpdateEndpoint; a ScalableTarget's ScheduledActions → PutScheduledAction each), and each request is
// checked member by member: required members, enums, integer ranges, string lengths and patterns, list sizes.
// Values CloudFormation resolves at deploy time (Ref, Fn::*) count as present but are not checked further.
//
// Debian's botocore is a 2022 snapshot. What the APIs gained since and our templates use is added below
// (MODEL_UPDATES), each with the API reference page it comes from; a member neither in the model nor there is not
// an error but is reported as `unknown` (the tests require that list to be empty, so a new member gets its source).
// The additions only add: run against a newer botocore (MME_BOTOCORE_DATA=<botocore>/data) they change nothing.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** A shape of a botocore service model (documentation left out). */
export interface Shape {
  type: string;
  required?: string[];
  members?: Record<string, { shape: string }>;
  member?: { shape: string };
  key?: { shape: string };
  value?: { shape: string };
  enum?: string[];
  min?: number;
  max?: number;
  pattern?: string;
}

/** The parts of a botocore service model this check reads. */
export interface ServiceModel {
  operations: Record<string, { input?: { shape: string } }>;
  shapes: Record<string, Shape>;
}

export type ServiceName = 'sagemaker' | 'application-autoscaling' | 'sagemaker-runtime';

/** What to install when botocore's models are missing. */
export const INSTALL_BOTOCORE = 'apt-get install python3-botocore (or pip install botocore)';

/**
 * botocore's data directory: MME_BOTOCORE_DATA if set, else Debian's python3-botocore (what .ci/run installs), else
 * the botocore of whatever `python3` is first on PATH; undefined when there is none.
 */
export function botocoreDataDir(): string | undefined {
  const candidates = [process.env.MME_BOTOCORE_DATA, '/usr/lib/python3/dist-packages/botocore/data'];
  const found = candidates.find((dir) => dir && existsSync(join(dir, 'sagemaker')));
  if (found) return found;
  const asked = spawnSync('python3', ['-c', 'import botocore, os; print(os.path.dirname(botocore.__file__))'], { encoding: 'utf8' });
  const dir = asked.status === 0 ? join(asked.stdout.trim(), 'data') : undefined;
  return dir && existsSync(join(dir, 'sagemaker')) ? dir : undefined;
}

/** The newest API version of `service` under `dataDir`, with MODEL_UPDATES applied. */
export function loadServiceModel(dataDir: string, service: ServiceName): ServiceModel {
  const versions = readdirSync(join(dataDir, service)).sort();
  const dir = join(dataDir, service, versions[versions.length - 1]!);
  const plain = join(dir, 'service-2.json');
  const text = existsSync(plain) ? readFileSync(plain, 'utf8') : gunzipSync(readFileSync(`${plain}.gz`)).toString('utf8');
  const model = JSON.parse(text) as ServiceModel;
  for (const update of MODEL_UPDATES.filter((u) => u.service === service)) update.apply(model.shapes);
  return model;
}

/**
 * What the APIs gained after the 2022 snapshot, as far as our templates use it, each from the current API reference.
 */
export const MODEL_UPDATES: Array<{ service: ServiceName; what: string; source: string; apply(shapes: Record<string, Shape>): void }> =
  [
    {
      service: 'sagemaker',
      what: 'DeploymentConfig.RollingUpdatePolicy (rolling deployments); BlueGreenUpdatePolicy is no longer required',
      source: 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_RollingUpdatePolicy.html',
      apply(shapes) {
        shapes.RollingUpdatePolicy ??= {
          type: 'structure',
          required: ['MaximumBatchSize', 'WaitIntervalInSeconds'],
          members: {
            MaximumBatchSize: { shape: 'CapacitySize' },
            WaitIntervalInSeconds: { shape: 'WaitIntervalInSeconds' },
            MaximumExecutionTimeoutInSeconds: { shape: 'MaximumExecutionTimeoutInSeconds' },
            RollbackMaximumBatchSize: { shape: 'CapacitySize' },
          },
        };
        const config = shapes.DeploymentConfig!;
        config.members!.RollingUpdatePolicy = { shape: 'RollingUpdatePolicy' };
        config.required = [];
      },
    },
    {
      service: 'sagemaker',
      what: 'MaximumExecutionTimeoutInSeconds up to 28800 (was 14400)',
      source: 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_BlueGreenUpdatePolicy.html',
      apply(shapes) {
        const timeout = shapes.MaximumExecutionTimeoutInSeconds!;
        timeout.max = Math.max(timeout.max ?? 0, 28800);
      },
    },
    {
      service: 'sagemaker',
      what: 'ProductionVariant.InferenceAmiVersion',
      source: 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html',
      apply(shapes) {
        shapes.ProductionVariantInferenceAmiVersion ??= {
          type: 'string',
          enum: [
            'al2-ami-sagemaker-inference-gpu-2',
            'al2-ami-sagemaker-inference-gpu-2-1',
            'al2-ami-sagemaker-inference-gpu-3-1',
            'al2-ami-sagemaker-inference-neuron-2',
          ],
        };
        shapes.ProductionVariant!.members!.InferenceAmiVersion = { shape: 'ProductionVariantInferenceAmiVersion' };
      },
    },
    {
      service: 'sagemaker',
      what: 'ProductionVariantInstanceType: the g6 and g6e types',
      source: 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html',
      apply(shapes) {
        const sizes = ['xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge', '48xlarge'];
        const known = shapes.ProductionVariantInstanceType!.enum!;
        for (const type of ['g6', 'g6e'].flatMap((f) => sizes.map((s) => `ml.${f}.${s}`))) if (!known.includes(type)) known.push(type);
      },
    },
  ];

/** The API requests CloudFormation makes with one resource's properties. */
interface ApiRequest {
  readonly operation: string;
  readonly input: Record<string, unknown>;
  /** Where in the properties the request's own members are. */
  readonly path: string;
}

interface ResourceApi {
  readonly service: ServiceName;
  /** The operations the properties go to; a property is sent to every one whose input has that member. */
  readonly operations: string[];
  /** Properties CloudFormation handles itself, sent to no API call as they stand. */
  readonly cloudFormationOnly?: string[];
  /** Required members CloudFormation fills in when the template leaves them out (generated physical names). */
  readonly generated?: string[];
  /** Further requests made from parts of the properties. */
  readonly derived?: (props: Record<string, unknown>) => ApiRequest[];
}

/** The CloudFormation resource types checked, and the API calls CloudFormation makes for them. */
export const RESOURCE_APIS: Record<string, ResourceApi> = {
  'AWS::SageMaker::Model': { service: 'sagemaker', operations: ['CreateModel'], generated: ['ModelName'] },
  'AWS::SageMaker::EndpointConfig': {
    service: 'sagemaker',
    operations: ['CreateEndpointConfig'],
    generated: ['EndpointConfigName'],
  },
  // Created with CreateEndpoint; every later change of the template is an UpdateEndpoint (same DeploymentConfig shape).
  'AWS::SageMaker::Endpoint': { service: 'sagemaker', operations: ['CreateEndpoint', 'UpdateEndpoint'], generated: ['EndpointName'] },
  'AWS::ApplicationAutoScaling::ScalableTarget': {
    service: 'application-autoscaling',
    operations: ['RegisterScalableTarget'],
    cloudFormationOnly: ['ScheduledActions'],
    derived: (props) =>
      ((props.ScheduledActions as Array<Record<string, unknown>> | undefined) ?? []).map((action, i) => ({
        operation: 'PutScheduledAction',
        path: `ScheduledActions/${i}`,
        input: {
          ...action,
          ServiceNamespace: props.ServiceNamespace,
          ResourceId: props.ResourceId,
          ScalableDimension: props.ScalableDimension,
        },
      })),
  },
  // With ScalingTargetId, CloudFormation takes the namespace, resource and dimension from the target.
  'AWS::ApplicationAutoScaling::ScalingPolicy': {
    service: 'application-autoscaling',
    operations: ['PutScalingPolicy'],
    cloudFormationOnly: ['ScalingTargetId'],
  },
};

/** A finding: where in the template (`Resources/<id>/Properties/...`), which API request, and what is wrong. */
export interface ApiModelFinding {
  readonly path: string;
  readonly operation: string;
  readonly message: string;
}

export interface ApiModelReport {
  /** Values the API refuses. */
  readonly errors: ApiModelFinding[];
  /** Members neither the 2022 model nor MODEL_UPDATES know: not checked, reported. */
  readonly unknown: ApiModelFinding[];
  /** How many resources were checked, by type. */
  readonly checked: Record<string, number>;
}

/** The services' models, loaded once per data directory. */
export class ApiModels {
  private readonly models = new Map<ServiceName, ServiceModel>();
  constructor(private readonly dataDir: string) {}

  public model(service: ServiceName): ServiceModel {
    let model = this.models.get(service);
    if (!model) {
      model = loadServiceModel(this.dataDir, service);
      this.models.set(service, model);
    }
    return model;
  }

  /** Checks every SageMaker and Application Auto Scaling resource of `template`. */
  public checkTemplate(template: { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> }): ApiModelReport {
    const errors: ApiModelFinding[] = [];
    const unknown: ApiModelFinding[] = [];
    const checked: Record<string, number> = {};
    for (const [id, resource] of Object.entries(template.Resources ?? {})) {
      const api = RESOURCE_APIS[resource.Type];
      if (!api) continue;
      checked[resource.Type] = (checked[resource.Type] ?? 0) + 1;
      const props = resource.Properties ?? {};
      const base = `Resources/${id}/Properties`;
      const model = this.model(api.service);
      const inputs = api.operations.map((operation) => ({ operation, shape: inputShape(model, operation) }));
      for (const name of Object.keys(props)) {
        if (api.cloudFormationOnly?.includes(name)) continue;
        if (!inputs.some(({ shape }) => shape.members?.[name])) {
          unknown.push({ path: `${base}/${name}`, operation: api.operations.join('/'), message: `${name} is not a member of any of them` });
        }
      }
      for (const { operation, shape } of inputs) {
        const input = Object.fromEntries(Object.entries(props).filter(([name]) => shape.members?.[name]));
        for (const name of api.generated ?? []) input[name] ??= { generatedByCloudFormation: true };
        if (api.cloudFormationOnly?.includes('ScalingTargetId') && props.ScalingTargetId !== undefined) {
          for (const name of ['ServiceNamespace', 'ResourceId', 'ScalableDimension']) input[name] ??= props.ScalingTargetId;
        }
        new Checker(model, operation, errors, unknown).structure(shape, input, base);
      }
      for (const request of api.derived?.(props) ?? []) {
        const shape = inputShape(model, request.operation);
        new Checker(model, request.operation, errors, unknown).structure(shape, request.input, `${base}/${request.path}`);
      }
    }
    return { errors, unknown, checked };
  }

  /** Checks one value against a named shape of a service (e.g. sagemaker-runtime's TargetModelHeader). */
  public checkValue(service: ServiceName, shapeName: string, value: unknown): string[] {
    const errors: ApiModelFinding[] = [];
    new Checker(this.model(service), shapeName, errors, []).value(shapeName, value, shapeName);
    return errors.map((e) => e.message);
  }
}

function inputShape(model: ServiceModel, operation: string): Shape {
  const name = model.operations[operation]?.input?.shape;
  if (!name) throw new Error(`the API model has no operation ${operation}`);
  return model.shapes[name]!;
}

/** A value CloudFormation resolves at deploy time. */
function isIntrinsic(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'))) || 'generatedByCloudFormation' in value;
}

/**
 * botocore's patterns are Java regular expressions, matched as a search (Smithy's pattern trait is not implicitly
 * anchored). The few Java-only constructs they use are rewritten for JavaScript's `u` mode.
 */
export function apiPattern(pattern: string): RegExp {
  const source = pattern
    .replace(/\[\\p\{Print\}\]/g, '[\\x20-\\x7E]')
    .replace(/\\p\{Print\}/g, '[\\x20-\\x7E]')
    .replace(/\\A/g, '^')
    .replace(/\\[zZ]/g, '$');
  return new RegExp(source, 'u');
}

class Checker {
  constructor(
    private readonly model: ServiceModel,
    private readonly operation: string,
    private readonly errors: ApiModelFinding[],
    private readonly unknown: ApiModelFinding[],
  ) {}

  public structure(shape: Shape, value: Record<string, unknown>, path: string): void {
    for (const name of shape.required ?? []) {
      if (value[name] === undefined) this.error(`${path}/${name}`, `${name} is required`);
    }
    for (const [name, member] of Object.entries(value)) {
      if (member === undefined) continue;
      const ref = shape.members?.[name];
      if (!ref) {
        this.unknown.push({ path: `${path}/${name}`, operation: this.operation, message: `${name} is not in the API model` });
        continue;
      }
      this.value(ref.shape, member, `${path}/${name}`);
    }
  }

  public value(shapeName: string, value: unknown, path: string): void {
    if (isIntrinsic(value)) return;
    const shape = this.model.shapes[shapeName]!;
    const show = JSON.stringify(value);
    switch (shape.type) {
      case 'structure':
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.error(path, `expected an object, got ${show}`);
        return this.structure(shape, value as Record<string, unknown>, path);
      case 'list':
        if (!Array.isArray(value)) return this.error(path, `expected a list, got ${show}`);
        this.size(shape, value.length, path, 'items');
        value.forEach((item, i) => this.value(shape.member!.shape, item, `${path}/${i}`));
        return;
      case 'map':
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.error(path, `expected a map, got ${show}`);
        this.size(shape, Object.keys(value).length, path, 'entries');
        for (const [key, item] of Object.entries(value)) {
          this.value(shape.key!.shape, key, `${path}/${key} (key)`);
          this.value(shape.value!.shape, item, `${path}/${key}`);
        }
        return;
      case 'string':
        if (typeof value !== 'string') return this.error(path, `expected a string, got ${show}`);
        if (shape.enum && !shape.enum.includes(value)) {
          const values = shape.enum.length > 12 ? `the ${shape.enum.length} values of ${shapeName}` : shape.enum.join(', ');
          return this.error(path, `${show} is not one of ${values}`);
        }
        this.size(shape, value.length, path, 'characters');
        if (shape.pattern && !apiPattern(shape.pattern).test(value)) {
          this.error(path, `${show} does not match the pattern ${shape.pattern}`);
        }
        return;
      case 'integer':
      case 'long':
        if (typeof value !== 'number' || !Number.isInteger(value)) return this.error(path, `expected an integer, got ${show}`);
        return this.range(shape, value, path);
      case 'float':
      case 'double':
        if (typeof value !== 'number') return this.error(path, `expected a number, got ${show}`);
        return this.range(shape, value, path);
      case 'boolean':
        if (typeof value !== 'boolean') this.error(path, `expected a boolean, got ${show}`);
        return;
      default:
        return; // timestamps and blobs: not in our templates
    }
  }

  private range(shape: Shape, value: number, path: string): void {
    if (shape.min !== undefined && value < shape.min) this.error(path, `${value} is below the minimum ${shape.min}`);
    if (shape.max !== undefined && value > shape.max) this.error(path, `${value} is above the maximum ${shape.max}`);
  }

  private size(shape: Shape, size: number, path: string, unit: string): void {
    if (shape.min !== undefined && size < shape.min) this.error(path, `${size} ${unit}, fewer than the minimum ${shape.min}`);
    if (shape.max !== undefined && size > shape.max) this.error(path, `${size} ${unit}, more than the maximum ${shape.max}`);
  }

  private error(path: string, message: string): void {
    this.errors.push({ path, operation: this.operation, message });
  }
}

/** One line per finding, for a failing assertion. */
export function formatFindings(findings: ApiModelFinding[]): string {
  return findings.map((f) => `${f.path} (${f.operation}): ${f.message}`).join('\n');
}
