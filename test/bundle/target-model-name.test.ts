import { archiveBaseName, parseVersionedTargetModel, versionedKeyPattern, versionedTargetModel } from '../../lib/bundle/target-model-name';

const SHA = 'b89c6ad3fcec0123456789abcdef0123456789abcdef0123456789abcdef0123';

describe('the versioned TargetModel naming rule', () => {
  it('appends the first 12 hex digits of the archive SHA-256 to the name', () => {
    expect(versionedTargetModel('sentiment_onnx', SHA)).toBe('sentiment_onnx-b89c6ad3fcec.tar.gz');
    expect(versionedTargetModel('sentiment_onnx.tar.gz', SHA)).toBe('sentiment_onnx-b89c6ad3fcec.tar.gz');
    expect(archiveBaseName('a.b.tar.gz')).toBe('a.b');
  });

  it('refuses anything but a lower-case hex SHA-256', () => {
    expect(() => versionedTargetModel('m', SHA.toUpperCase())).toThrow(/not a SHA-256 in lower-case hex/);
    expect(() => versionedTargetModel('m', SHA.slice(0, 12))).toThrow(/not a SHA-256/);
  });

  it('matches every version of one archive under its prefix, and nothing else', () => {
    const pattern = new RegExp(versionedKeyPattern('team.a/', 'resnet'));
    expect(pattern.test('team.a/resnet-0123456789ab.tar.gz')).toBe(true);
    for (const key of [
      'team.a/resnet.tar.gz',
      'team.a/resnet-extra-0123456789ab.tar.gz',
      'team.a/resnet-0123456789AB.tar.gz',
      'team.a/resnet-0123456789ab.tar.gz.bak',
      'teamXa/resnet-0123456789ab.tar.gz',
      'other/team.a/resnet-0123456789ab.tar.gz',
    ]) {
      expect([key, pattern.test(key)]).toEqual([key, false]);
    }
  });

  it('reads the name and hash back', () => {
    expect(parseVersionedTargetModel('resnet-extra-0123456789ab.tar.gz')).toEqual({ name: 'resnet-extra', hash: '0123456789ab' });
    expect(parseVersionedTargetModel('resnet.tar.gz')).toBeUndefined();
  });
});
