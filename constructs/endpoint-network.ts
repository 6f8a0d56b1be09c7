// Synth-time advice for an endpoint attached to a VPC: a model in private subnets reaches S3 (its archives), ECR (its
// image) and CloudWatch (logs, metrics) only through VPC endpoints or a NAT gateway. AWS: "Give SageMaker AI hosted
// endpoints access to resources in your Amazon VPC" (https://docs.aws.amazon.com/sagemaker/latest/dg/host-vpc.html):
// an S3 VPC endpoint or NAT for model artifacts, and NAT or interface endpoints for other AWS services.

import { Annotations, Aspects, IAspect, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';

/** What the model needs in the VPC, each with the service-name suffix of the VPC endpoint that provides it. */
const NEEDS = [
  { suffix: '.s3', what: 'an S3 gateway endpoint (the model archives)' },
  { suffix: '.ecr.api', what: 'an ecr.api interface endpoint (image pull)' },
  { suffix: '.ecr.dkr', what: 'an ecr.dkr interface endpoint (image layers)' },
  { suffix: '.logs', what: 'a logs interface endpoint (CloudWatch Logs)' },
  { suffix: '.monitoring', what: 'a monitoring interface endpoint (CloudWatch metrics)' },
];

/**
 * Warns at synth (`mme-deploy:vpc-egress`) when the selected subnets are private and the VPC is not known to give the
 * model a way out. Checked once the app is complete, so endpoints added after the model count.
 */
export function adviseOnVpcEgress(scope: IConstruct, vpc: ec2.IVpc, subnets: ec2.SelectedSubnets): void {
  if (subnets.hasPublic) return;
  const aspect: IAspect = {
    visit(node) {
      if (node !== scope) return;
      const message = egressAdvice(scope, vpc, subnets);
      if (message) Annotations.of(scope).addWarningV2('mme-deploy:vpc-egress', message);
    },
  };
  Aspects.of(scope).add(aspect);
}

function egressAdvice(scope: IConstruct, vpc: ec2.IVpc, subnets: ec2.SelectedSubnets): string | undefined {
  const isolated = subnets.subnets.every((s) => vpc.isolatedSubnets.includes(s));
  const ownVpc = vpc instanceof ec2.Vpc;
  if (ownVpc && !isolated && vpc.node.findAll().some((c) => c instanceof ec2.CfnNatGateway)) return undefined;
  const present = new Set(vpcEndpointSuffixes(scope, vpc));
  const missing = NEEDS.filter((n) => !present.has(n.suffix)).map((n) => n.what);
  if (missing.length === 0) return undefined;
  const where = isolated ? 'isolated subnets (no NAT)' : 'private subnets';
  const known = ownVpc ? '' : ' (an imported VPC cannot be checked at synth; acknowledge this warning once it is provided)';
  return (
    `The model runs in ${where} of ${vpc.node.path}: it reaches S3, ECR and CloudWatch only through VPC endpoints ` +
    `or a NAT gateway. Missing${known}: ${missing.join(', ')}${isolated ? '' : ' — or a NAT gateway for all of them'}.`
  );
}

/** The service-name suffixes (`.s3`, `.ecr.api`, ...) of the VPC endpoints of `vpc` defined in the same stack. */
function vpcEndpointSuffixes(scope: IConstruct, vpc: ec2.IVpc): string[] {
  const stack = Stack.of(scope);
  const vpcId = JSON.stringify(stack.resolve(vpc.vpcId));
  return stack.node
    .findAll()
    .filter((c): c is ec2.CfnVPCEndpoint => c instanceof ec2.CfnVPCEndpoint)
    .filter((e) => JSON.stringify(stack.resolve(e.vpcId)) === vpcId)
    .map((e) => JSON.stringify(stack.resolve(e.serviceName)))
    .flatMap((name) => NEEDS.filter((n) => name.includes(`${n.suffix}"`)).map((n) => n.suffix));
}
