// A replay of CloudFormation's order of operations over a synthesized template (create, update, a failed update and
// its rollback with the cleanup after it, delete), driving the real ScalingGuard handler (constructs/handlers/) and
// a stateful local stand-in of SageMaker, Application Auto Scaling, CloudWatch alarms and the stack's resource table.
// The handler's AWS SDK clients are real; routeSdkTo routes their commands to the stand-in.
//
// The order, from CloudFormation's documentation:
// - Create: every resource after the resources it refers to (Ref, Fn::GetAtt, Fn::Sub) or names in DependsOn
//   (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-dependson.html). CloudFormation runs
//   independent resources in parallel; one topological order is one of the interleavings it may choose.
// - Update: changed and new resources in that order; a change of a property marked "Update requires: Replacement"
//   creates a new physical resource and the old one is deleted in the cleanup phase
//   (UPDATE_COMPLETE_CLEANUP_IN_PROGRESS), together with resources removed from the template, after every update
//   succeeded ("if CloudFormation needs to replace an existing resource, it first creates a new resource and then
//   deletes the old resource",
//   https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/using-cfn-updating-stacks-monitor-stack.html).
//   A DeletionPolicy of Retain keeps the physical resource
//   (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html).
// - Failed update: the failed resource and every resource the update changed are updated back to the previous
//   template's properties (UPDATE_ROLLBACK_IN_PROGRESS); a custom resource gets an Update request whose
//   ResourceProperties are the old ones, the one whose update failed included (aws/aws-cdk#17040). Resources the
//   update created, and the new physical resources of replacements, are deleted only afterwards, in
//   UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS, and "newly created resources marked with a deletion policy of
//   Retain" are kept unless RetainExceptOnCreate is set (RollbackStack, default false:
//   https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_RollbackStack.html). A rollback that
//   fails leaves the stack UPDATE_ROLLBACK_FAILED
//   (https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_ContinueUpdateRollback.html).
//   AWS does not document the order of the resources within the rollback: the harness replays the previous template's
//   dependency order ('template') and its reverse ('reverse'), and the guard must hold under both.
// - Delete: every resource before the resources it depends on (the reverse order), Retain kept.
// SageMaker's side, from its documentation: an UpdateEndpoint that changes the instance type of, or removes, a variant
// registered as a scalable target fails (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html);
// DeleteEndpoint deregisters the endpoint's scalable targets when the caller may, and fails otherwise
// (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-delete-with-scaling.html); a blue/green or rolling deployment
// needs the same variant names (what issue 21 found; the stand-in refuses it like SageMaker).

import {
  ApplicationAutoScalingClient,
  DeregisterScalableTargetCommand,
  DescribeScalableTargetsCommand,
  PutScalingPolicyCommand,
  PutScheduledActionCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudFormationClient, DescribeStackResourceCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand, PutMetricAlarmCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommand, DescribeEndpointConfigCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { onEvent } from '../../constructs/handlers/scaling-guard/index.js';

export type Resource = {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string[];
  DeletionPolicy?: string;
};
export type Template = { Resources: Record<string, Resource> };
export type Handler = typeof onEvent;
export type RollbackOrder = 'template' | 'reverse';

const ACCOUNT = '111122223333';
const REGION = 'eu-west-1';
const STACK_NAME = 'S';
const STACK_ID = `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${STACK_NAME}/0a1b`;
const GUARD = 'Custom::MmeDeployScalingGuard';
const DIMENSION = 'sagemaker:variant:DesiredInstanceCount';

/** Properties whose change replaces the resource ("Update requires: Replacement" in the resource reference). */
const CREATE_ONLY: Record<string, string[] | 'all'> = {
  'AWS::SageMaker::Model': 'all',
  'AWS::SageMaker::EndpointConfig': 'all',
  'AWS::SageMaker::Endpoint': ['EndpointName'],
  'AWS::ApplicationAutoScaling::ScalableTarget': ['ResourceId', 'ScalableDimension', 'ServiceNamespace'],
  'AWS::ApplicationAutoScaling::ScalingPolicy': ['PolicyName', 'ScalingTargetId', 'ResourceId'],
  'AWS::CloudWatch::Alarm': ['AlarmName'],
};

/** An AWS error as the SDK raises it. */
export function awsError(name: string, message: string): Error {
  return Object.assign(new Error(message), { name });
}

// ---------------------------------------------------------------------------------------------------------------------
// The stand-in of the services

type Policy = { PolicyName: string; PolicyARN: string; PolicyType: string; config: unknown };
type Target = {
  ServiceNamespace: string;
  ResourceId: string;
  ScalableDimension: string;
  MinCapacity: number;
  MaxCapacity: number;
  RoleARN?: string;
  scheduled: Map<string, Record<string, unknown>>;
  policies: Map<string, Policy>;
};
type Variant = { VariantName: string; InstanceType: string };
type Endpoint = { EndpointName: string; EndpointConfigName: string; deployment: boolean };

/** SageMaker, Application Auto Scaling and CloudWatch alarms, with the state the tests compare. */
export class Cloud {
  public readonly targets = new Map<string, Target>();
  public readonly endpoints = new Map<string, Endpoint>(); // by lower-case name
  public readonly configs = new Map<string, Variant[]>();
  public readonly alarms = new Map<string, Record<string, unknown>>();
  /** Whether CloudFormation's role may deregister scalable targets (DeleteEndpoint needs it when one is registered). */
  public cfnRoleMayDeregister = true;
  private serial = 0;

  /** `count` SageMaker targets of other endpoints, registered before the stack's. */
  public seedOthers(count: number): void {
    for (let i = 0; i < count; i++) {
      this.putTarget({ ResourceId: `endpoint/other-${i}/variant/AllTraffic`, MinCapacity: 1, MaxCapacity: 2 });
    }
  }

  /** The targets that are not the stack's endpoint's instance-count targets, as `ResourceId|dimension`. */
  public othersThan(endpointName: string | undefined): string[] {
    const own = new Set(endpointName ? this.registeredOn(endpointName).filter((t) => t.ScalableDimension === DIMENSION) : []);
    return [...this.targets.values()].filter((t) => !own.has(t)).map((t) => `${t.ResourceId}|${t.ScalableDimension}`);
  }

  public next(): number {
    return ++this.serial;
  }

  private key(namespace: string, resourceId: string, dimension: string): string {
    return `${namespace}|${resourceId}|${dimension}`;
  }

  private putTarget(input: Record<string, unknown>): void {
    const namespace = (input.ServiceNamespace as string) ?? 'sagemaker';
    const dimension = (input.ScalableDimension as string) ?? DIMENSION;
    const key = this.key(namespace, input.ResourceId as string, dimension);
    const existing = this.targets.get(key);
    if (existing) {
      if (input.MinCapacity !== undefined) existing.MinCapacity = Number(input.MinCapacity);
      if (input.MaxCapacity !== undefined) existing.MaxCapacity = Number(input.MaxCapacity);
      return;
    }
    this.targets.set(key, {
      ServiceNamespace: namespace,
      ResourceId: input.ResourceId as string,
      ScalableDimension: dimension,
      MinCapacity: Number(input.MinCapacity),
      MaxCapacity: Number(input.MaxCapacity),
      RoleARN: input.RoleARN as string | undefined,
      scheduled: new Map(),
      policies: new Map(),
    });
  }

  public describeTarget(input: Record<string, unknown>): Target {
    return this.target(input);
  }

  private target(input: Record<string, unknown>): Target {
    const t = this.targets.get(this.key(input.ServiceNamespace as string, input.ResourceId as string, input.ScalableDimension as string));
    if (!t) throw awsError('ObjectNotFoundException', `No scalable target registered for ${String(input.ResourceId)}`);
    return t;
  }

  // ---- Application Auto Scaling

  public registerScalableTarget(input: Record<string, unknown>): object {
    const match = /^endpoint\/([^/]+)\/variant\/(.+)$/.exec(input.ResourceId as string);
    const endpoint = match && this.endpoints.get(match[1]!.toLowerCase());
    const variants = endpoint ? this.configs.get(endpoint.EndpointConfigName) ?? [] : [];
    if (!match || !variants.some((v) => v.VariantName === match[2])) {
      throw awsError('ValidationException', `The resource ${String(input.ResourceId)} does not exist.`);
    }
    this.putTarget(input);
    return {};
  }

  public deregisterScalableTarget(input: Record<string, unknown>): object {
    const t = this.target(input);
    this.targets.delete(this.key(t.ServiceNamespace, t.ResourceId, t.ScalableDimension));
    return {};
  }

  public describeScalableTargets(input: { ServiceNamespace?: string; NextToken?: string; MaxResults?: number }): object {
    const all = [...this.targets.values()].filter((t) => t.ServiceNamespace === input.ServiceNamespace);
    const start = input.NextToken ? Number(input.NextToken) : 0;
    const size = Math.min(input.MaxResults ?? 50, 50);
    const page = all.slice(start, start + size).map((t) => ({
      ServiceNamespace: t.ServiceNamespace,
      ResourceId: t.ResourceId,
      ScalableDimension: t.ScalableDimension,
      MinCapacity: t.MinCapacity,
      MaxCapacity: t.MaxCapacity,
      RoleARN: t.RoleARN,
      CreationTime: new Date(0),
    }));
    return { ScalableTargets: page, NextToken: start + size < all.length ? String(start + size) : undefined };
  }

  public putScalingPolicy(input: Record<string, unknown>): { PolicyARN: string } {
    const t = this.target(input);
    const name = input.PolicyName as string;
    const existing = t.policies.get(name);
    const arn =
      existing?.PolicyARN ??
      `arn:aws:autoscaling:${REGION}:${ACCOUNT}:scalingPolicy:${this.next()}:resource/sagemaker/${t.ResourceId}:policyName/${name}`;
    const config = input.TargetTrackingScalingPolicyConfiguration ?? input.StepScalingPolicyConfiguration;
    t.policies.set(name, { PolicyName: name, PolicyARN: arn, PolicyType: input.PolicyType as string, config: plain(config) });
    return { PolicyARN: arn };
  }

  public deleteScalingPolicy(input: Record<string, unknown>): object {
    const t = this.target(input);
    if (!t.policies.delete(input.PolicyName as string)) throw awsError('ObjectNotFoundException', `No policy ${String(input.PolicyName)}`);
    return {};
  }

  public putScheduledAction(input: Record<string, unknown>): object {
    const t = this.target(input);
    const { ServiceNamespace, ResourceId, ScalableDimension, ...action } = input;
    void ServiceNamespace, ResourceId, ScalableDimension;
    t.scheduled.set(action.ScheduledActionName as string, plain(action) as Record<string, unknown>);
    return {};
  }

  // ---- SageMaker

  public describeEndpoint(input: { EndpointName?: string }): object {
    const e = this.endpoints.get(String(input.EndpointName).toLowerCase());
    if (!e) throw awsError('ValidationException', `Could not find endpoint "${String(input.EndpointName)}".`);
    return { EndpointName: e.EndpointName, EndpointConfigName: e.EndpointConfigName, EndpointStatus: 'InService' };
  }

  public describeEndpointConfig(input: { EndpointConfigName?: string }): object {
    const variants = this.configs.get(String(input.EndpointConfigName));
    if (!variants) throw awsError('ValidationException', `Could not find endpoint configuration "${String(input.EndpointConfigName)}".`);
    return { EndpointConfigName: input.EndpointConfigName, ProductionVariants: variants };
  }

  /** Targets registered on the endpoint's variants. */
  public registeredOn(endpointName: string): Target[] {
    const prefix = `endpoint/${endpointName.toLowerCase()}/variant/`;
    return [...this.targets.values()].filter((t) => t.ResourceId.toLowerCase().startsWith(prefix));
  }

  public updateEndpoint(name: string, configName: string, deployment: boolean): void {
    const e = this.endpoints.get(name.toLowerCase())!;
    const before = this.configs.get(e.EndpointConfigName)!;
    const after = this.configs.get(configName)!;
    for (const t of this.registeredOn(name)) {
      const variantName = t.ResourceId.split('/variant/')[1];
      const now = before.find((v) => v.VariantName === variantName);
      const next = after.find((v) => v.VariantName === variantName);
      if (now && (!next || next.InstanceType !== now.InstanceType)) {
        throw awsError(
          'ValidationException',
          `The variant ${variantName} is registered as a scalable target: deregister it before changing its instance type or removing it.`,
        );
      }
    }
    const names = (vs: Variant[]) => JSON.stringify(vs.map((v) => v.VariantName).sort());
    if (deployment && names(before) !== names(after)) {
      throw awsError('ValidationException', 'A deployment configuration needs the same variant names in both endpoint configurations.');
    }
    e.EndpointConfigName = configName;
    e.deployment = deployment;
  }

  public deleteEndpoint(name: string): void {
    const registered = this.registeredOn(name);
    if (registered.length > 0 && !this.cfnRoleMayDeregister) {
      throw awsError(
        'AccessDeniedException',
        'Application Auto Scaling could not deregister the variant: not authorized to DeregisterScalableTarget.',
      );
    }
    for (const t of registered) this.targets.delete(this.key(t.ServiceNamespace, t.ResourceId, t.ScalableDimension));
    this.endpoints.delete(name.toLowerCase());
  }

  // ---- CloudWatch

  public describeAlarms(input: { AlarmNames?: string[] }): object {
    return { MetricAlarms: (input.AlarmNames ?? []).flatMap((n) => (this.alarms.has(n) ? [{ ...this.alarms.get(n), AlarmName: n }] : [])) };
  }

  public putMetricAlarm(input: Record<string, unknown>): object {
    const { AlarmName, ...rest } = input;
    this.alarms.set(AlarmName as string, plain(rest) as Record<string, unknown>);
    return {};
  }

  /** Which policy an alarm action names now: `policy:<name>`, or `dangling:<arn>` when no policy has that ARN. */
  public actionTarget(arn: string): string {
    for (const t of this.targets.values()) for (const p of t.policies.values()) if (p.PolicyARN === arn) return `policy:${p.PolicyName}`;
    return `dangling:${arn}`;
  }
}

/** JSON-equal data: numbers stay numbers, undefined members go. */
function plain(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

// ---------------------------------------------------------------------------------------------------------------------
// The stack

type Record_ = { type: string; physicalId: string; attrs: Record<string, string>; props: Record<string, unknown>; status: string };
export type StackStatus =
  | 'CREATE_COMPLETE'
  | 'UPDATE_COMPLETE'
  | 'UPDATE_ROLLBACK_COMPLETE'
  | 'UPDATE_ROLLBACK_FAILED'
  | 'DELETE_COMPLETE'
  | 'DELETE_FAILED';

/** What happened, in order: `create X`, `update X`, `fail X: reason`, `rollback X`, `delete X`, `retain X`. */
export type Journal = string[];

/** A stack of one template at a time, deployed into a Cloud through CloudFormation's order of operations. */
export class Stack {
  public template: Template = { Resources: {} };
  public readonly records = new Map<string, Record_>();
  public status?: StackStatus;
  public readonly journal: Journal = [];
  /** The endpoint's name once created (kept after deletion, for the checks). */
  public get endpointName(): string | undefined {
    const record = [...this.records.values(), ...this.deleted.values()].find((r) => r.type === 'AWS::SageMaker::Endpoint');
    return record?.attrs.EndpointName;
  }
  /** Records of resources deleted by the stack, which DescribeStackResource still answers for (DELETE_COMPLETE). */
  private readonly deleted = new Map<string, Record_>();

  constructor(
    public readonly cloud: Cloud,
    private readonly handler: Handler = onEvent,
    private readonly rollbackOrder: RollbackOrder = 'template',
  ) {}

  public async create(template: Template): Promise<StackStatus> {
    for (const id of order(template)) {
      this.journal.push(`create ${id}`);
      try {
        this.records.set(id, await this.createAny(id, template.Resources[id]!, template));
      } catch (err) {
        throw new Error(`create ${id} failed: ${(err as Error).message}`);
      }
    }
    this.template = template;
    return (this.status = 'CREATE_COMPLETE');
  }

  /** Applies `next`; `failAt` makes that resource's operation fail before it does anything. */
  public async update(next: Template, failAt?: string): Promise<StackStatus> {
    const previous = this.template;
    const before = new Map(this.records);
    const created: string[] = [];
    const replaced = new Map<string, Record_>(); // logical id -> the old record
    const updated: string[] = [];
    let failure: string | undefined;
    for (const id of order(next)) {
      const resource = next.Resources[id]!;
      const old = previous.Resources[id];
      const props = this.resolve(resource.Properties ?? {}, next) as Record<string, unknown>;
      const record = this.records.get(id);
      if (old && record && old.Type === resource.Type && JSON.stringify(record.props) === JSON.stringify(props)) continue;
      const verb = !old || !record ? 'create' : replaces(resource.Type, record.props, props) ? 'replace' : 'update';
      this.journal.push(`${verb} ${id}`);
      try {
        if (id === failAt) throw awsError('InjectedFailure', `injected failure at ${id}`);
        if (verb === 'create') {
          this.records.set(id, await this.createAny(id, resource, next));
          created.push(id);
        } else if (verb === 'replace') {
          replaced.set(id, record!);
          this.records.set(id, await this.createAny(id, resource, next));
        } else {
          updated.push(id);
          this.records.set(id, await this.updateAny(record!, resource, props));
        }
      } catch (err) {
        failure = `${id}: ${(err as Error).message}`;
        this.journal.push(`fail ${failure}`);
        if (verb === 'update') {
          // A failed update is rolled back too, from the properties it was attempted with (its OldResourceProperties).
          updated.push(id);
          this.records.set(id, { ...record!, props, status: 'UPDATE_FAILED' });
        }
        break;
      }
    }
    if (!failure) {
      this.template = next;
      // UPDATE_COMPLETE_CLEANUP_IN_PROGRESS: old physical resources of replacements, then removed resources.
      for (const [id, old] of replaced) await this.deleteRecord(id, old, previous.Resources[id]!);
      for (const id of order(previous).reverse()) {
        if (!next.Resources[id]) await this.deleteRecord(id, before.get(id)!, previous.Resources[id]!);
      }
      return (this.status = 'UPDATE_COMPLETE');
    }
    // UPDATE_ROLLBACK_IN_PROGRESS: replacements switch back to the old physical resources, then the updated
    // resources (the failed one included) are updated back to the previous template's properties.
    const newRecords = new Map<string, Record_>();
    for (const [id, old] of replaced) {
      this.journal.push(`rollback ${id}`);
      newRecords.set(id, this.records.get(id)!);
      this.records.set(id, old);
    }
    const rollback = order(previous).filter((id) => updated.includes(id));
    if (this.rollbackOrder === 'reverse') rollback.reverse();
    for (const id of rollback) {
      const resource = previous.Resources[id]!;
      this.journal.push(`rollback ${id}`);
      try {
        const props = this.resolve(resource.Properties ?? {}, previous) as Record<string, unknown>;
        this.records.set(id, await this.updateAny(this.records.get(id)!, resource, props));
      } catch (err) {
        this.journal.push(`fail rollback ${id}: ${(err as Error).message}`);
        return (this.status = 'UPDATE_ROLLBACK_FAILED');
      }
    }
    // UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS: what the failed update created, newest first.
    for (const [id, record] of newRecords) await this.deleteRecord(id, record, next.Resources[id]!);
    for (const id of created.reverse()) {
      await this.deleteRecord(id, this.records.get(id)!, next.Resources[id]!);
      this.records.delete(id);
    }
    this.template = previous;
    return (this.status = 'UPDATE_ROLLBACK_COMPLETE');
  }

  public async delete(): Promise<StackStatus> {
    for (const id of order(this.template).reverse()) {
      this.journal.push(`delete ${id}`);
      try {
        await this.deleteAny(this.records.get(id)!, this.template.Resources[id]!);
        this.deleted.set(id, { ...this.records.get(id)!, status: 'DELETE_COMPLETE' });
        this.records.delete(id);
      } catch (err) {
        this.journal.push(`fail ${id}: ${(err as Error).message}`);
        return (this.status = 'DELETE_FAILED');
      }
    }
    this.template = { Resources: {} };
    return (this.status = 'DELETE_COMPLETE');
  }

  /** DescribeStackResource as CloudFormation answers it. */
  public describeStackResource(input: { StackName?: string; LogicalResourceId?: string }): object {
    const id = String(input.LogicalResourceId);
    const record = this.records.get(id) ?? this.deleted.get(id);
    if (!record) throw awsError('ValidationError', `Resource ${id} does not exist for stack ${STACK_NAME}`);
    return {
      StackResourceDetail: {
        LogicalResourceId: id,
        PhysicalResourceId: record.physicalId,
        ResourceType: record.type,
        ResourceStatus: record.status,
        LastUpdatedTimestamp: new Date(0),
      },
    };
  }

  // ---- one resource

  private async createAny(id: string, resource: Resource, template: Template): Promise<Record_> {
    const props = this.resolve(resource.Properties ?? {}, template) as Record<string, unknown>;
    if (resource.Type === GUARD) {
      await this.guard({ RequestType: 'Create', StackId: STACK_ID, ResourceProperties: props });
      return { type: resource.Type, physicalId: `${id}-guard`, attrs: {}, props, status: 'CREATE_COMPLETE' };
    }
    return this.createSync(id, resource.Type, props);
  }

  private createSync(id: string, type: string, props: Record<string, unknown>): Record_ {
    const n = this.cloud.next();
    const record = (physicalId: string, attrs: Record<string, string> = {}): Record_ => ({
      type,
      physicalId,
      attrs,
      props,
      status: 'CREATE_COMPLETE',
    });
    switch (type) {
      case 'AWS::SageMaker::Model':
        return record(`${id}-${n}`, { ModelName: `${id}-${n}` });
      case 'AWS::SageMaker::EndpointConfig': {
        const name = `${id}-${n}`;
        const variants = (props.ProductionVariants as Array<Record<string, unknown>>).map((v) => ({
          VariantName: String(v.VariantName),
          InstanceType: String(v.InstanceType),
        }));
        this.cloud.configs.set(name, variants);
        return record(`arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint-config/${name.toLowerCase()}`, { EndpointConfigName: name });
      }
      case 'AWS::SageMaker::Endpoint': {
        const name = (props.EndpointName as string) ?? `MmeEndpoint-AbC${n}`; // generated names keep capitals
        this.cloud.endpoints.set(name.toLowerCase(), {
          EndpointName: name,
          EndpointConfigName: String(props.EndpointConfigName),
          deployment: !!props.DeploymentConfig,
        });
        return record(`arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${name.toLowerCase()}`, { EndpointName: name });
      }
      case 'AWS::ApplicationAutoScaling::ScalableTarget':
        this.cloud.registerScalableTarget(props);
        for (const action of (props.ScheduledActions as Array<Record<string, unknown>>) ?? []) {
          this.cloud.putScheduledAction({ ...targetKey(props), ...action });
        }
        return record(`${String(props.ResourceId)}|${String(props.ScalableDimension)}|${String(props.ServiceNamespace)}`);
      case 'AWS::ApplicationAutoScaling::ScalingPolicy': {
        const { PolicyARN } = this.cloud.putScalingPolicy({ ...this.targetOfPolicy(props), ...props });
        return record(PolicyARN, { Arn: PolicyARN });
      }
      case 'AWS::CloudWatch::Alarm': {
        const name = (props.AlarmName as string) ?? `${STACK_NAME}-${id}-${n}`;
        this.cloud.putMetricAlarm({ ...props, AlarmName: name });
        return record(name, { Arn: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${name}` });
      }
      default:
        return record(`${id}-${n}`, { Arn: `arn:aws:generic:${REGION}:${ACCOUNT}:${id}-${n}` });
    }
  }

  private async updateAny(record: Record_, resource: Resource, props: Record<string, unknown>): Promise<Record_> {
    const next: Record_ = { ...record, props, status: 'UPDATE_COMPLETE' };
    switch (resource.Type) {
      case GUARD:
        await this.guard({ RequestType: 'Update', StackId: STACK_ID, ResourceProperties: props, OldResourceProperties: record.props });
        return next;
      case 'AWS::SageMaker::Endpoint':
        this.cloud.updateEndpoint(record.attrs.EndpointName!, String(props.EndpointConfigName), !!props.DeploymentConfig);
        return next;
      case 'AWS::ApplicationAutoScaling::ScalableTarget':
        // The resource's update handler reads the target first and fails when it is not registered.
        this.cloud.describeTarget(targetKey(props));
        this.cloud.registerScalableTarget({ ...targetKey(props), MinCapacity: props.MinCapacity, MaxCapacity: props.MaxCapacity });
        for (const action of (props.ScheduledActions as Array<Record<string, unknown>>) ?? []) {
          this.cloud.putScheduledAction({ ...targetKey(props), ...action });
        }
        return next;
      case 'AWS::ApplicationAutoScaling::ScalingPolicy':
        this.cloud.putScalingPolicy({ ...this.targetOfPolicy(props), ...props });
        return next;
      case 'AWS::CloudWatch::Alarm':
        this.cloud.putMetricAlarm({ ...props, AlarmName: record.physicalId });
        return next;
      default:
        return next;
    }
  }

  /** Deletes a physical resource in a cleanup phase unless retained; a failure there leaves the stack as it is. */
  private async deleteRecord(id: string, record: Record_, resource: Resource): Promise<void> {
    if (resource.DeletionPolicy === 'Retain') {
      this.journal.push(`retain ${id}`);
      return;
    }
    this.journal.push(`delete ${id}`);
    await this.deleteAny(record, resource).catch((err: Error) => this.journal.push(`fail delete ${id}: ${err.message}`));
  }

  private async deleteAny(record: Record_, resource: Resource): Promise<void> {
    if (resource.DeletionPolicy === 'Retain') return;
    const notFoundIsDeleted = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        if ((err as Error).name !== 'ObjectNotFoundException') throw err;
      }
    };
    switch (record.type) {
      case GUARD:
        await this.guard({ RequestType: 'Delete', StackId: STACK_ID, ResourceProperties: record.props });
        return;
      case 'AWS::SageMaker::Endpoint':
        this.cloud.deleteEndpoint(record.attrs.EndpointName!);
        return;
      case 'AWS::SageMaker::EndpointConfig':
        this.cloud.configs.delete(record.attrs.EndpointConfigName!);
        return;
      case 'AWS::ApplicationAutoScaling::ScalableTarget':
        notFoundIsDeleted(() => this.cloud.deregisterScalableTarget(targetKey(record.props)));
        return;
      case 'AWS::ApplicationAutoScaling::ScalingPolicy':
        notFoundIsDeleted(() => this.cloud.deleteScalingPolicy({ ...this.targetOfPolicy(record.props), ...record.props }));
        return;
      case 'AWS::CloudWatch::Alarm':
        this.cloud.alarms.delete(record.physicalId);
        return;
      default:
    }
  }

  private targetOfPolicy(props: Record<string, unknown>): Record<string, unknown> {
    const [ResourceId, ScalableDimension, ServiceNamespace] = String(props.ScalingTargetId).split('|');
    return { ResourceId, ScalableDimension, ServiceNamespace };
  }

  private async guard(event: {
    RequestType: 'Create' | 'Update' | 'Delete';
    StackId: string;
    ResourceProperties: Record<string, unknown>;
    OldResourceProperties?: Record<string, unknown>;
  }): Promise<void> {
    await this.handler(event as unknown as Parameters<Handler>[0], guardClients());
  }

  // ---- intrinsic functions

  /** The template's values with Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split resolved against the records. */
  public resolve(node: unknown, template: Template): unknown {
    if (Array.isArray(node)) return node.map((n) => this.resolve(n, template));
    if (!node || typeof node !== 'object') return node;
    const o = node as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1) {
      const [fn] = keys;
      const arg = o[fn!];
      if (fn === 'Ref') return this.ref(String(arg));
      if (fn === 'Fn::GetAtt') return this.getAtt(...(arg as [string, string]));
      if (fn === 'Fn::Join') {
        const [sep, parts] = arg as [string, unknown[]];
        return (this.resolve(parts, template) as unknown[]).join(sep);
      }
      if (fn === 'Fn::Select') {
        const [i, list] = this.resolve(arg, template) as [number, unknown[]];
        return list[Number(i)];
      }
      if (fn === 'Fn::Split') {
        const [sep, s] = this.resolve(arg, template) as [string, string];
        return s.split(sep);
      }
      if (fn === 'Fn::Sub') {
        return String(arg).replace(/\$\{([^}]+)\}/g, (_, name: string) =>
          name.includes('.') ? this.getAtt(...(name.split('.', 2) as [string, string])) : this.ref(name),
        );
      }
      if (fn!.startsWith('Fn::')) throw new Error(`The harness does not resolve ${fn}`);
    }
    return Object.fromEntries(keys.map((k) => [k, this.resolve(o[k], template)]));
  }

  private ref(name: string): string {
    const pseudo: Record<string, string> = {
      'AWS::Partition': 'aws',
      'AWS::AccountId': ACCOUNT,
      'AWS::Region': REGION,
      'AWS::StackId': STACK_ID,
      'AWS::StackName': STACK_NAME,
      'AWS::URLSuffix': 'amazonaws.com',
    };
    if (pseudo[name]) return pseudo[name]!;
    const record = this.records.get(name);
    if (!record) throw new Error(`Ref to ${name}, which does not exist (yet)`);
    return record.physicalId;
  }

  private getAtt(id: string, attribute: string): string {
    const record = this.records.get(id);
    if (!record) throw new Error(`Fn::GetAtt on ${id}, which does not exist (yet)`);
    return record.attrs[attribute] ?? `${record.physicalId}.${attribute}`;
  }
}

function targetKey(props: Record<string, unknown>): Record<string, unknown> {
  return { ServiceNamespace: props.ServiceNamespace, ResourceId: props.ResourceId, ScalableDimension: props.ScalableDimension };
}

function replaces(type: string, before: Record<string, unknown>, after: Record<string, unknown>): boolean {
  const createOnly = CREATE_ONLY[type];
  if (!createOnly) return false;
  if (createOnly === 'all') return true;
  return createOnly.some((p) => JSON.stringify(before[p]) !== JSON.stringify(after[p]));
}

/** Logical IDs a resource refers to (Ref, Fn::GetAtt, Fn::Sub) or depends on. */
export function dependenciesOf(resource: Resource, template: Template): Set<string> {
  const found = new Set<string>(resource.DependsOn ?? []);
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (typeof o.Ref === 'string') found.add(o.Ref);
      if (Array.isArray(o['Fn::GetAtt'])) found.add(o['Fn::GetAtt'][0] as string);
      if (typeof o['Fn::Sub'] === 'string') for (const m of o['Fn::Sub'].matchAll(/\$\{([^}.]+)/g)) found.add(m[1]!);
      Object.values(o).forEach(walk);
    }
  };
  walk(resource.Properties);
  return new Set([...found].filter((id) => template.Resources[id]));
}

/**
 * A dependency order of the template's resources (each after what it depends on): a new array each call (callers
 * reverse it), worked out once per template object. The tests share their synthesized templates and change none, and
 * a replay asks for the order of the same two templates at every step.
 */
export function order(template: Template): string[] {
  let known = orders.get(template);
  if (!known) orders.set(template, (known = dependencyOrder(template)));
  return [...known];
}
const orders = new WeakMap<Template, readonly string[]>();

function dependencyOrder(template: Template): string[] {
  const out: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string): void => {
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting') throw new Error(`Circular dependency at ${id}`);
    state.set(id, 'visiting');
    for (const dep of dependenciesOf(template.Resources[id]!, template)) visit(dep);
    state.set(id, 'done');
    out.push(id);
  };
  Object.keys(template.Resources).forEach(visit);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// State: what the template in force describes, and what the stand-in holds

export type ScalingState = {
  endpoint?: { variants: Variant[] };
  targets: Array<{
    ResourceId: string;
    ScalableDimension: string;
    MinCapacity: number;
    MaxCapacity: number;
    scheduled: Record<string, unknown>;
    policies: Record<string, { PolicyType: string; config: unknown }>;
  }>;
  alarms: Record<string, string[]>;
};

/** What the template in force says exists: the endpoint's variants, the scalable targets, their policies and alarms. */
export function described(stack: Stack): ScalingState {
  const { Resources } = stack.template;
  const resolved = (id: string) => stack.resolve(Resources[id]!.Properties ?? {}, stack.template) as Record<string, unknown>;
  const ids = (type: string) => Object.keys(Resources).filter((id) => Resources[id]!.Type === type);
  const [endpointId] = ids('AWS::SageMaker::Endpoint');
  let endpoint: ScalingState['endpoint'];
  if (endpointId) {
    const configName = resolved(endpointId).EndpointConfigName;
    const configId = ids('AWS::SageMaker::EndpointConfig').find((id) => stack.records.get(id)?.attrs.EndpointConfigName === configName)!;
    const variants = (resolved(configId).ProductionVariants as Array<Record<string, unknown>>).map((v) => ({
      VariantName: String(v.VariantName),
      InstanceType: String(v.InstanceType),
    }));
    endpoint = { variants };
  }
  const policyName = new Map(ids('AWS::ApplicationAutoScaling::ScalingPolicy').map((id) => [stack.records.get(id)!.physicalId, id]));
  const targets = ids('AWS::ApplicationAutoScaling::ScalableTarget').map((id) => {
    const t = resolved(id);
    const physicalId = stack.records.get(id)!.physicalId;
    const policies = ids('AWS::ApplicationAutoScaling::ScalingPolicy')
      .map(resolved)
      .filter((p) => p.ScalingTargetId === physicalId)
      .map((p) => [
        String(p.PolicyName),
        { PolicyType: String(p.PolicyType), config: plain(p.TargetTrackingScalingPolicyConfiguration ?? p.StepScalingPolicyConfiguration) },
      ]);
    const scheduled = ((t.ScheduledActions as Array<Record<string, unknown>>) ?? []).map((a) => [a.ScheduledActionName, plain(a)]);
    return {
      ResourceId: String(t.ResourceId),
      ScalableDimension: String(t.ScalableDimension),
      MinCapacity: Number(t.MinCapacity),
      MaxCapacity: Number(t.MaxCapacity),
      scheduled: Object.fromEntries(scheduled),
      policies: Object.fromEntries(policies),
    };
  });
  const alarms = Object.fromEntries(
    ids('AWS::CloudWatch::Alarm').map((id) => {
      const actions = (resolved(id).AlarmActions as string[]) ?? [];
      const named = actions.map((arn) => {
        const policyId = policyName.get(arn);
        return policyId ? `policy:${String(resolved(policyId).PolicyName)}` : arn;
      });
      return [stack.records.get(id)!.physicalId, named];
    }),
  );
  return { endpoint, targets, alarms };
}

/** What the stand-in holds for the stack's endpoint (other accounts' and other dimensions' targets left out). */
export function actual(stack: Stack, alarmNames: string[]): ScalingState {
  const cloud = stack.cloud;
  const endpointRecord = [...stack.records.values()].find((r) => r.type === 'AWS::SageMaker::Endpoint');
  const endpointName = endpointRecord?.attrs.EndpointName;
  const e = endpointName ? cloud.endpoints.get(endpointName.toLowerCase()) : undefined;
  const targets = endpointName
    ? cloud
        .registeredOn(endpointName)
        .filter((t) => t.ScalableDimension === DIMENSION)
        .map((t) => ({
          ResourceId: t.ResourceId,
          ScalableDimension: t.ScalableDimension,
          MinCapacity: t.MinCapacity,
          MaxCapacity: t.MaxCapacity,
          scheduled: Object.fromEntries([...t.scheduled].map(([k, v]) => [k, v])),
          policies: Object.fromEntries([...t.policies.values()].map((p) => [p.PolicyName, { PolicyType: p.PolicyType, config: p.config }])),
        }))
    : [];
  const alarms = Object.fromEntries(
    alarmNames.flatMap((n) => {
      const alarm = cloud.alarms.get(n);
      return alarm ? [[n, ((alarm.AlarmActions as string[]) ?? []).map((arn) => cloud.actionTarget(arn))]] : [];
    }),
  );
  return { endpoint: e ? { variants: cloud.configs.get(e.EndpointConfigName)! } : undefined, targets, alarms };
}

/**
 * The clients the guard gets, made once: routeSdkTo replaces each client class's `send`, so every instance reaches the
 * stand-in the same way, and a client holds no state between calls. (Four new clients per guard call, each resolving
 * its whole configuration, cost scaling-lifecycle.test.ts about 1.4 s of its 6.7 s of CPU.)
 */
let clients: Parameters<Handler>[1] | undefined;
function guardClients(): Parameters<Handler>[1] {
  clients ??= {
    cloudformation: new CloudFormationClient({ region: REGION }),
    autoscaling: new ApplicationAutoScalingClient({ region: REGION }),
    sagemaker: new SageMakerClient({ region: REGION }),
    cloudwatch: new CloudWatchClient({ region: REGION }),
  };
  return clients;
}

type Route = (input: never) => object;

/**
 * Routes the AWS SDK clients the handler builds to the stand-in; returns a function that restores them. Each client
 * class's `send` answers the commands the stand-in knows, by command class, and throws on any other command. (Not
 * aws-sdk-client-mock: its sinon stubs record every call and deep-compare each one against every route, about 2 s of
 * scaling-lifecycle.test.ts's CPU, and an unrouted command there answers undefined instead of failing.)
 */
export function routeSdkTo(get: () => { cloud: Cloud; stack: Stack }): () => void {
  const routes = new Map<abstract new (...args: never[]) => object, Route>([
    [DescribeScalableTargetsCommand, (i) => get().cloud.describeScalableTargets(i)],
    [RegisterScalableTargetCommand, (i) => get().cloud.registerScalableTarget(i)],
    [DeregisterScalableTargetCommand, (i) => get().cloud.deregisterScalableTarget(i)],
    [PutScalingPolicyCommand, (i) => get().cloud.putScalingPolicy(i)],
    [PutScheduledActionCommand, (i) => get().cloud.putScheduledAction(i)],
    [DescribeStackResourceCommand, (i) => get().stack.describeStackResource(i)],
    [DescribeEndpointCommand, (i) => get().cloud.describeEndpoint(i)],
    [DescribeEndpointConfigCommand, (i) => get().cloud.describeEndpointConfig(i)],
    [DescribeAlarmsCommand, (i) => get().cloud.describeAlarms(i)],
    [PutMetricAlarmCommand, (i) => get().cloud.putMetricAlarm(i)],
  ]);
  const classes = [ApplicationAutoScalingClient, CloudFormationClient, SageMakerClient, CloudWatchClient];
  const own = classes.map((c) => Object.getOwnPropertyDescriptor(c.prototype, 'send'));
  for (const c of classes) {
    Object.defineProperty(c.prototype, 'send', {
      configurable: true,
      writable: true,
      value: async function send(command: { input: never; constructor: { name: string } }): Promise<object> {
        const route = routes.get(command.constructor as abstract new (...args: never[]) => object);
        if (!route) throw new Error(`The stand-in answers no ${command.constructor.name} (${c.name}).`);
        return route(command.input);
      },
    });
  }
  return () =>
    classes.forEach((c, i) => {
      if (own[i]) Object.defineProperty(c.prototype, 'send', own[i]);
      else delete (c.prototype as { send?: unknown }).send;
    });
}
