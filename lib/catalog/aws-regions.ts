// What an AWS region name looks like, to refuse a typo (`--region mars-1`, `--region us-east`) before it becomes a
// confusing DNS failure or a plan without a price. Only the shape is checked: new regions keep the shape.
//
// Source, read 2026-11-30: AWS General Reference, "Regional endpoints" (https://docs.aws.amazon.com/general/latest/gr/
// rande.html) — every region code is a partition-specific area prefix (us, eu, ap, sa, ca, me, af, il, mx, cn, and
// us-gov / us-iso / us-isob / eu-isoe), a direction or area word, and a number: us-east-1, us-gov-west-1, ap-southeast-7.

const REGION_NAME = /^(?:[a-z]{2}|us-gov|us-iso[a-z]?|eu-iso[a-z]?)-[a-z]+-\d{1,2}$/;

/** Why `region` cannot be an AWS region code, or undefined when it has the shape of one. */
export function regionNameProblem(region: string): string | undefined {
  if (REGION_NAME.test(region)) return undefined;
  return `'${region}' is not an AWS region code; region codes look like us-east-1, eu-west-2 or ap-southeast-1.`;
}
