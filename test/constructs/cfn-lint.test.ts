import { cfnLint } from './cfn-lint';
import { itWithTools } from '../tools';

describe('the cfn-lint harness', () => {
  itWithTools('reports real errors, and leaves out only the exact findings its schema lags on', { tools: ['cfn-lint'] }, (found) => {
    const errors = cfnLint({
      broken: {
        Resources: {
          Bucket: { Type: 'AWS::S3::Bucket', Properties: { VersioningConfiguration: { Status: 'Sometimes' } } },
          Board: { Type: 'AWS::CloudWatch::Dashboard', Properties: { DashboardBody: '{}', Tags: [{ Key: 'a', Value: 'b' }] } },
          Alarm: {
            Type: 'AWS::CloudWatch::Alarm',
            Properties: { Tags: [{ Key: 'a', Value: 'b' }], ComparisonOperator: 'x', EvaluationPeriods: 1 },
          },
        },
      },
    }, found.paths['cfn-lint']);
    expect(errors.map((e) => `${e.rule} ${e.path}`)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^E\d+ Resources\/Bucket\/Properties\/VersioningConfiguration\/Status$/)]),
    );
    expect(errors.some((e) => e.path.startsWith('Resources/Alarm'))).toBe(true);
    expect(errors.filter((e) => e.path === 'Resources/Board/Properties/Tags')).toEqual([]);
  });
});
