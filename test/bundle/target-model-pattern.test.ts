// A TargetModel SageMaker would refuse at invoke is refused before upload: the one name rule (`push`, `package`, `list`,
// `remove` and the constructs) against SageMaker Runtime's own pattern for the TargetModel header, read from AWS's
// service model as botocore ships it (Debian python3-botocore).

import { spawnSync } from 'node:child_process';
import { targetModelNameProblem, TARGET_MODEL_MAX_LENGTH } from '../../lib/repository/mme-rules';
import { describeWithTools } from '../tools';

/** The TargetModelHeader shape of sagemaker-runtime's service model. */
function targetModelShape(python: string): { pattern: string; min: number; max: number } {
  const script =
    'import json, botocore.loaders as l; m = l.Loader().load_service_model("sagemaker-runtime", "service-2"); ' +
    'print(json.dumps(m["shapes"][m["shapes"]["InvokeEndpointInput"]["members"]["TargetModel"]["shape"]]))';
  const run = spawnSync(python, ['-c', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

/** A Java pattern of the service model as a JavaScript RegExp (\A, \z, \S and POSIX \p{Print}: printable ASCII). */
function javaPattern(pattern: string): RegExp {
  const js = pattern.replace(/^\\A/, '^').replace(/\\z$/, '$').replace(/\\p\{Print\}/g, '\\x20-\\x7e');
  return new RegExp(js, 'u');
}

describeWithTools("TargetModel names and SageMaker's own pattern", { python: ['botocore'] }, (found) => {
  const shape = targetModelShape(found.python!);
  const sagemaker = (name: string) =>
    name.length >= shape.min && name.length <= shape.max && javaPattern(shape.pattern).test(name);
  const names = [
    'sentiment.tar.gz',
    'a b.tar.gz',
    ' leading-space.tar.gz',
    'tab\there.tar.gz',
    'é.tar.gz',
    'emoji-\u{1f600}.tar.gz',
    'nbsp\u00a0.tar.gz',
    'x'.repeat(1024),
    'x'.repeat(1025),
    '~!@#$%^&*()_+=-`{}[]|:;"\'<>,.?.tar.gz',
    '',
  ];

  it('reads the pattern and the length limits the rule uses', () => {
    expect(shape).toEqual({ type: 'string', min: 1, max: TARGET_MODEL_MAX_LENGTH, pattern: '\\A\\S[\\p{Print}]*\\z' });
  });

  it.each(names.map((n) => [n.length > 60 ? `${n.slice(0, 10)}... (${n.length} characters)` : JSON.stringify(n), n]))(
    '%s: refused whenever SageMaker refuses it',
    (_title, name) => {
      if (!sagemaker(name)) expect(targetModelNameProblem(name)).toEqual(expect.any(String));
    },
  );

  it('refuses each kind with a message naming the fault', () => {
    expect(targetModelNameProblem('é.tar.gz')).toMatch(/^TargetModel 'é.tar.gz' contains 'é': SageMaker takes only printable ASCII/);
    expect(targetModelNameProblem(' a.tar.gz')).toMatch(/starts with a space/);
    expect(targetModelNameProblem('x'.repeat(1025))).toMatch(/is 1025 characters; SageMaker takes at most 1024/);
    expect(targetModelNameProblem('a b.tar.gz')).toBeUndefined();
  });
});
