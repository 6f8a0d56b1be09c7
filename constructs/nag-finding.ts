// The text cdk-nag shows for a CloudFormation value in a finding id (`Resource::<Bucket.Arn>/models/*`), so the
// constructs can acknowledge the findings they cause on purpose, with the reason, at the exact resource.
//
// The constructs acknowledge with the bare finding id (`AwsSolutions-IAM5[Resource::*]`), never the namespaced one
// (`AwsSolutions::AwsSolutions-IAM5[...]`): cdk-nag matches a bare id against the acknowledging construct and its
// children only, while aws-cdk-lib (2.269, core/lib/private/synthesis-validation.js, collectAcknowledgedRuleIds)
// gathers namespaced ids from the whole app and suppresses that finding everywhere — it would hide the same
// wildcard on any other role.

import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** `value` (a string that may hold tokens) rendered the way cdk-nag renders references: `<Logical.Attr>`, `<Ref>`. */
export function nagText(scope: IConstruct, value: string): string {
  return flatten(Stack.of(scope).resolve(value));
}

function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const o = node as Record<string, unknown>;
    if (Array.isArray(o['Fn::Join'])) {
      const [delimiter, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(flatten).join(delimiter);
    }
    if ('Fn::Sub' in o) return flatten(o['Fn::Sub']);
    if (Array.isArray(o['Fn::GetAtt'])) {
      const [resource, attribute] = o['Fn::GetAtt'] as [unknown, unknown];
      return `<${flatten(resource)}.${flatten(attribute)}>`;
    }
    if ('Fn::ImportValue' in o) return flatten(o['Fn::ImportValue']);
    if ('Ref' in o) return `<${flatten(o.Ref)}>`;
  }
  return JSON.stringify(node);
}
