// Where an archive's symbolic links point once every link exists: inside links are created, escaping ones refused.

import { hardLinkTargetReason, linkEscapeReason } from '../../lib/archive/archive-links';

describe('linkEscapeReason', () => {
  const none = new Map<string, string>();

  it('accepts targets that stay inside, however they get there', () => {
    expect(linkEscapeReason('env/bin/python', 'python3.10', none)).toBeUndefined();
    expect(linkEscapeReason('env/lib/libz.so', '../../env/lib/libz.so.1', none)).toBeUndefined();
    expect(linkEscapeReason('a/b', './../c', none)).toBeUndefined();
    expect(linkEscapeReason('a/b', 'missing/../../c', none)).toBeUndefined();
  });

  it('refuses absolute targets and targets above the root', () => {
    expect(linkEscapeReason('a', '/etc/passwd', none)).toMatch(/absolute path/);
    expect(linkEscapeReason('a/b', '../../x', none)).toMatch(/outside the archive/);
  });

  it('follows other links of the archive as the kernel will once they exist', () => {
    // `root -> .` makes `root/..` the parent of the extraction: lexically inside, really outside.
    const links = new Map([['root', '.'], ['escape', 'root/..']]);
    expect(linkEscapeReason('escape', 'root/..', links)).toMatch(/outside the archive/);
    const deep = new Map([['lib', 'env/lib'], ['up', 'lib/..']]);
    expect(linkEscapeReason('up', 'lib/..', deep)).toBeUndefined(); // env/lib/.. is env, inside
    const toAbsolute = new Map([['etc', '/etc'], ['passwd', 'etc/passwd']]);
    expect(linkEscapeReason('passwd', 'etc/passwd', toAbsolute)).toMatch(/passes through "etc" to the absolute path "\/etc"/);
  });

  it('refuses a loop of links', () => {
    const loop = new Map([['a', 'b'], ['b', 'a']]);
    expect(linkEscapeReason('a', 'b', loop)).toMatch(/loop of links/);
  });
});

describe('hardLinkTargetReason', () => {
  it('accepts a regular file extracted earlier and refuses anything else', () => {
    const files = new Set(['env/bin/python3.10']);
    expect(hardLinkTargetReason('./env/bin/python3.10', files)).toBeUndefined();
    expect(hardLinkTargetReason('env/bin/python3.11', files)).toMatch(/not a regular file earlier in the archive/);
    expect(hardLinkTargetReason('../outside', files)).toMatch(/outside the archive/);
    expect(hardLinkTargetReason('/etc/passwd', files)).toMatch(/outside the archive/);
  });
});
