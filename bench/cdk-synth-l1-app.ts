// The bare L1 twin of the `cdk deploy` app for bench/cdk-synth.js: a stack holding exactly the resources, mappings
// and outputs of a template the app synthesized (path in BENCH_TEMPLATE). Each resource is a CfnResource with the
// template's properties, and the aws-cdk-lib module of its typed L1 (aws-sagemaker for CfnModel, ...) is loaded as a
// hand-written typed L1 stack would load it — loading those modules is most of what any such stack costs.
// (CfnInclude would build the typed L1s itself, but its template parsing costs more than the app's constructs.)

import { readFileSync } from 'node:fs';
import { App, CfnMapping, CfnOutput, CfnResource, Stack } from 'aws-cdk-lib';

interface Template {
  Mappings?: Record<string, Record<string, Record<string, unknown>>>;
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown>; DependsOn?: string[] }>;
  Outputs?: Record<string, { Value: unknown }>;
}

/** `aws-cdk-lib/aws-sagemaker`'s `CfnModel` for `AWS::SageMaker::Model`, loaded; nothing for custom resources. */
function loadTypedL1(type: string): void {
  const [vendor, service, name] = type.split('::');
  if (vendor !== 'AWS') return;
  const module = require(`aws-cdk-lib/aws-${service!.toLowerCase()}`) as Record<string, unknown>;
  if (!module[`Cfn${name}`]) throw new Error(`no L1 class for ${type}`);
}

const template = JSON.parse(readFileSync(process.env.BENCH_TEMPLATE!, 'utf8')) as Template;
const app = new App();
const stack = new Stack(app, 'TritonMmeL1');
for (const [id, mapping] of Object.entries(template.Mappings ?? {})) new CfnMapping(stack, id, { mapping });
const resources = new Map<string, CfnResource>();
for (const [id, r] of Object.entries(template.Resources)) {
  loadTypedL1(r.Type);
  const resource = new CfnResource(stack, id, { type: r.Type, properties: r.Properties });
  resource.overrideLogicalId(id);
  resources.set(id, resource);
}
for (const [id, r] of Object.entries(template.Resources)) {
  for (const dep of r.DependsOn ?? []) resources.get(id)!.node.addDependency(resources.get(dep)!);
}
for (const [id, o] of Object.entries(template.Outputs ?? {})) new CfnOutput(stack, id, { value: o.Value as string });
app.synth();
