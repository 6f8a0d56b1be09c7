// ScalingGuard: lets `cdk deploy` change the instance type (or variant name) of an autoscaled endpoint in one
// deployment. SageMaker refuses such an UpdateEndpoint while the variant is a registered scalable target; AWS's own
// procedure is deregister → update → register again
// (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html).
//
// How the template orders it (tested in test/constructs/scaling-guard.test.ts):
// 1. The guard is a custom resource the endpoint depends on, so CloudFormation updates it before the endpoint. Its
//    properties hold the instance type and variant; when they change, its handler deregisters the old variant
//    (DeregisterScalableTarget deletes the variant's scaling policies too).
// 2. The endpoint updates (UpdateEndpoint) with nothing registered.
// 3. The scalable target and its policies live under a construct whose id holds the instance type and variant
//    (ScalableInstanceCount `InstanceCount-<type>[-<variant>]`), so a change gives them new logical IDs and policy
//    names: CloudFormation creates them after the endpoint (they depend on it), registering the variant again.
// 4. In the cleanup phase CloudFormation deletes the old logical resources. The old scalable target is retained
//    (DeletionPolicy Retain): deleting it would deregister the new registration, which has the same ResourceId.
//    The old policies have other names, so deleting them cannot touch the new ones.
// The guard itself deregisters when it is deleted (autoscaling removed from the app); a deleted endpoint needs
// nothing: Application Auto Scaling deregisters the variants of an endpoint SageMaker deletes, when the caller may
// deregister them (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling.html, "Delete endpoints configured
// for auto scaling").

import { CustomResource, Stack } from 'aws-cdk-lib';
import type * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { handlerProvider } from './handler-provider';

/** Properties of a ScalingGuard. */
export interface ScalingGuardProps {
  /** The endpoint whose variant autoscaling registers. */
  readonly endpoint: sagemaker.CfnEndpoint;
  /** The variant's name. */
  readonly variantName: string;
  /** The variant's instance type. */
  readonly instanceType: string;
}

/** Deregisters an endpoint variant from Application Auto Scaling before an update that changes its instance type. */
export class ScalingGuard extends Construct {
  /** The custom resource type. */
  public static readonly RESOURCE_TYPE = 'Custom::MmeDeployScalingGuard';

  public readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: ScalingGuardProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const provider = handlerProvider(this, {
      resourceType: ScalingGuard.RESOURCE_TYPE,
      handler: 'scaling-guard',
      description: 'mme-deploy: deregisters an autoscaled endpoint variant before its instance type changes',
      statements: [
        { Effect: 'Allow', Action: ['cloudformation:DescribeStackResource'], Resource: stack.stackId },
        {
          Effect: 'Allow',
          Action: ['application-autoscaling:DescribeScalableTargets', 'application-autoscaling:DeregisterScalableTarget'],
          Resource: '*',
        },
      ],
      wildcardReason:
        'DescribeScalableTargets has no resource-level permissions, and the variant to deregister is found at deploy ' +
        'time (the endpoint name is generated); the function only deregisters SageMaker variants of this stack.',
    });
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: provider.serviceToken,
      resourceType: ScalingGuard.RESOURCE_TYPE,
      properties: {
        // The logical ID, not a reference: a reference would make the guard depend on the endpoint.
        EndpointLogicalId: props.endpoint.logicalId,
        VariantName: props.variantName,
        InstanceType: props.instanceType,
      },
    });
    props.endpoint.node.addDependency(this.resource);
  }
}
