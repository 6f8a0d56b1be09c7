// The Lambda functions behind mme-deploy's custom resources: one stack-level aws-cdk-lib CustomResourceProvider per
// resource type, its code a directory of constructs/handlers/ (plain JavaScript, deployed as written), and the cdk-nag
// findings its role and runtime cause acknowledged at that provider only, with the reasons.

import { CustomResourceProvider, CustomResourceProviderRuntime, Duration, Size, Stack, Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { projectPath } from './project-path';

/** An IAM statement in the raw JSON form CustomResourceProvider takes. */
export interface RawStatement {
  readonly Effect: 'Allow';
  readonly Action: string[];
  readonly Resource: string | string[];
}

/** What a provider needs besides its handler directory. */
export interface HandlerProviderOptions {
  /** The custom resource type, `Custom::...`; also the provider's stack-unique id. */
  readonly resourceType: string;
  /** The directory under constructs/handlers/ holding index.js. */
  readonly handler: string;
  /** What the function may do. */
  readonly statements: RawStatement[];
  /** Why the statements with `Resource: "*"` have no narrower resource (the cdk-nag acknowledgment's reason). */
  readonly wildcardReason?: string;
  readonly description: string;
  /**
   * How long one event may run.
   * @default Duration.minutes(5)
   */
  readonly timeout?: Duration;
  /**
   * The function's memory.
   * @default - CustomResourceProvider's default (128 MiB)
   */
  readonly memorySize?: Size;
}

/** The stack's provider for `options.resourceType`, created on first use. */
export function handlerProvider(scope: Construct, options: HandlerProviderOptions): CustomResourceProvider {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild(`${options.resourceType}CustomResourceProvider`);
  if (existing) return existing as CustomResourceProvider;
  const provider = CustomResourceProvider.getOrCreateProvider(scope, options.resourceType, {
    codeDirectory: projectPath('constructs', 'handlers', options.handler),
    runtime: CustomResourceProviderRuntime.NODEJS_22_X,
    timeout: options.timeout ?? Duration.minutes(5),
    memorySize: options.memorySize,
    policyStatements: options.statements as unknown as object[],
    description: options.description,
  });
  Validations.of(provider).acknowledge(
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: "aws-cdk-lib's CustomResourceProvider gives its function the managed policy that only lets it write its own logs.",
    },
    ...(options.wildcardReason ? [{ id: 'AwsSolutions-IAM5[Resource::*]', reason: options.wildcardReason }] : []),
  );
  return provider;
}
