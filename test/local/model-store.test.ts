// The models directory's naming rules: the hash, TargetModel names Triton refuses, and the url a LOAD names.

import { containerModelUrl, defaultTargetModel, modelHash, targetModelProblem } from '../../lib/local/model-store';

describe('model hash', () => {
  it('is deterministic, distinct per TargetModel, and made of the characters Triton accepts in a url', () => {
    expect(modelHash('sentiment.tar.gz')).toBe(modelHash('sentiment.tar.gz'));
    expect(modelHash('sentiment.tar.gz')).not.toBe(modelHash('sentiment2.tar.gz'));
    for (const name of ['a', 'ünïcode.tar.gz', 'x y', '../../etc']) expect(modelHash(name)).toMatch(/^[0-9A-Za-z._]+$/);
  });
});

describe('TargetModel names', () => {
  it('default to the archive file name', () => {
    expect(defaultTargetModel('/tmp/out/sentiment.tar.gz')).toBe('sentiment.tar.gz');
  });

  it('refuse what Triton refuses as a model name', () => {
    expect(targetModelProblem('team/sentiment.tar.gz')).toContain('must not contain path traversal characters');
    expect(targetModelProblem('..')).toBeDefined();
    expect(targetModelProblem('')).toBe('is empty');
    expect(targetModelProblem('a\nb')).toBe('contains control characters');
    expect(targetModelProblem('sentiment-v2.tar.gz')).toBeUndefined();
  });
});

describe('the LOAD url', () => {
  it('is <root>/<hash>/model, whatever trailing slashes the root has', () => {
    expect(containerModelUrl('abc')).toBe('/opt/ml/models/abc/model');
    expect(containerModelUrl('abc', '/mnt/models//')).toBe('/mnt/models/abc/model');
  });
});
