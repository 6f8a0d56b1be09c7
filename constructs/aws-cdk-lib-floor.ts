// The aws-cdk-lib floor of the constructs, checked when `mme-deploy/constructs` loads: package managers that do not
// enforce peer dependencies (pnpm, yarn, npm --legacy-peer-deps) install an older one, which fails later with an
// error about some missing method instead of saying which version is needed.

/** The first aws-cdk-lib whose `Validations.acknowledge()` takes cdk-nag finding ids holding `::` (aws/aws-cdk#38787). */
export const AWS_CDK_LIB_FLOOR = '2.269.0';

/** The one-line problem with `version` of aws-cdk-lib, or undefined when it is at least the floor. */
export function awsCdkLibFloorProblem(version: string, floor: string = AWS_CDK_LIB_FLOOR): string | undefined {
  const parts = (v: string) => v.split(/[.+-]/).slice(0, 3).map(Number);
  const [have, need] = [parts(version), parts(floor)];
  for (let i = 0; i < 3; i++) {
    if (have[i]! > need[i]!) return undefined;
    if (have[i]! < need[i]!) {
      return `mme-deploy/constructs needs aws-cdk-lib ${floor} or later (its peer dependency), but this app has ${version}: ` +
        `run npm install aws-cdk-lib@^${floor}.`;
    }
  }
  return undefined;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const installed = (require('aws-cdk-lib/package.json') as { version: string }).version;
const problem = awsCdkLibFloorProblem(installed);
if (problem) throw new Error(problem);
