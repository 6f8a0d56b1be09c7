import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LINT_DIR_VARIABLE, lintRecordedTemplates, recordTemplate } from './cfn-lint';
import { itWithTools } from '../tools';

describe('the cfn-lint harness', () => {
  itWithTools('reports real errors, of every run it splits the templates over, and leaves out only the exact findings its schema '
    + 'lags on', { tools: ['cfn-lint'] }, async (found) => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-lint-test-'));
    const previous = process.env[LINT_DIR_VARIABLE];
    process.env[LINT_DIR_VARIABLE] = dir;
    try {
      recordTemplate('broken bucket', {
        Resources: {
          Bucket: { Type: 'AWS::S3::Bucket', Properties: { VersioningConfiguration: { Status: 'Sometimes' } } },
          Board: { Type: 'AWS::CloudWatch::Dashboard', Properties: { DashboardBody: '{}', Tags: [{ Key: 'a', Value: 'b' }] } },
        },
      });
      recordTemplate('broken alarm', {
        Resources: {
          Alarm: {
            Type: 'AWS::CloudWatch::Alarm',
            Properties: { Tags: [{ Key: 'a', Value: 'b' }], ComparisonOperator: 'x', EvaluationPeriods: 1 },
          },
        },
      });
      // Two templates, two cfn-lint runs at once: each run's errors come back, under the name of their own template.
      const errors = await lintRecordedTemplates(dir, found.paths['cfn-lint'], 2);
      const at = (name: string) => errors.filter((e) => e.template.startsWith(`${name} [`)).map((e) => `${e.rule} ${e.path}`);
      expect(at('broken bucket')).toEqual(
        expect.arrayContaining([expect.stringMatching(/^E\d+ Resources\/Bucket\/Properties\/VersioningConfiguration\/Status$/)]),
      );
      expect(at('broken bucket').some((e) => e.includes('Alarm'))).toBe(false);
      expect(at('broken alarm').length).toBeGreaterThan(0);
      expect(at('broken alarm').every((e) => / Resources\/Alarm/.test(e))).toBe(true);
      expect(errors.filter((e) => e.path === 'Resources/Board/Properties/Tags')).toEqual([]);
      expect(errors.length).toBe(at('broken bucket').length + at('broken alarm').length);
    } finally {
      if (previous === undefined) delete process.env[LINT_DIR_VARIABLE];
      else process.env[LINT_DIR_VARIABLE] = previous;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
