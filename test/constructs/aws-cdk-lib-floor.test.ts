import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AWS_CDK_LIB_FLOOR, awsCdkLibFloorProblem } from '../../constructs/aws-cdk-lib-floor';

const root = join(__dirname, '..', '..');

describe('the aws-cdk-lib floor', () => {
  it('is the peer dependency range and the development version', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.peerDependencies['aws-cdk-lib']).toBe(`^${AWS_CDK_LIB_FLOOR}`);
    expect(pkg.devDependencies['aws-cdk-lib']).toBe(AWS_CDK_LIB_FLOOR);
  });

  it('refuses an older aws-cdk-lib in one line naming the floor and the fix, and accepts the floor and later', () => {
    expect(awsCdkLibFloorProblem('2.268.1')).toBe(
      'mme-deploy/constructs needs aws-cdk-lib 2.269.0 or later (its peer dependency), but this app has 2.268.1: ' +
        'run npm install aws-cdk-lib@^2.269.0.',
    );
    expect(awsCdkLibFloorProblem('2.9.0')).toMatch(/but this app has 2\.9\.0/);
    for (const version of ['2.269.0', '2.269.1', '2.276.0', '2.1000.0', '3.0.0']) expect(awsCdkLibFloorProblem(version)).toBeUndefined();
  });

  it('is checked first when mme-deploy/constructs loads', () => {
    const index = readFileSync(join(root, 'constructs', 'index.ts'), 'utf8');
    const firstImport = index.split('\n').find((line) => /^(export|import) /.test(line));
    expect(firstImport).toBe("export { AWS_CDK_LIB_FLOOR } from './aws-cdk-lib-floor';");
  });
});
