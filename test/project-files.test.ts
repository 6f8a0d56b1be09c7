// What a user of the repository or the npm package reads before the code: the licence and the third-party notice, the
// package's metadata, README links that work where the README is shown, and no path that exists on one machine only.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MACHINE_PATH, S, SIBLING, WORKSPACE } from './machine-path';

const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  license: string;
  repository: { type: string; url: string };
  homepage: string;
  bugs: { url: string };
  keywords: string[];
};

describe('licence and notice', () => {
  it('LICENSE is the Apache License 2.0 that package.json names', () => {
    expect(pkg.license).toBe('Apache-2.0');
    expect(read('LICENSE')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\//);
  });

  it('NOTICE lists every third-party source of test/real-world with its commit and licence', () => {
    const corpus = JSON.parse(read('test/real-world/corpus.json')) as {
      sources: Record<string, { repo: string; commit: string; licence: string }>;
    };
    const notice = read('NOTICE');
    const listed = notice.split('\n').filter((line) => line.startsWith('- https://github.com/'));
    const expected = Object.values(corpus.sources).map((s) => `- https://github.com/${s.repo} (${s.commit}) - ${s.licence}`);
    expect([...listed].sort()).toEqual([...new Set(expected)].sort());
  });
});

describe('package.json metadata and the README on the npm page', () => {
  it('names the repository, homepage, issue tracker and keywords', () => {
    expect(pkg.repository).toEqual({ type: 'git', url: expect.stringMatching(/^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/) });
    const web = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(pkg.homepage).toBe(`${web}#readme`);
    expect(pkg.bugs).toEqual({ url: `${web}/issues` });
    expect(pkg.keywords).toEqual(expect.arrayContaining(['sagemaker', 'triton', 'aws-cdk']));
  });

  it("links only to files the repository holds (the npm page resolves them against package.json's repository)", () => {
    const readme = read('README.md');
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^(https?:|mailto:|#)/.test(l));
    expect(links.length).toBeGreaterThan(5);
    const broken = links.filter((link) => !existsSync(join(ROOT, decodeURI(link.split('#')[0]!))));
    expect(broken).toEqual([]);
  });
});

describe('the repository refers to nothing outside itself', () => {
  it('recognises a machine path, and not a container or example path', () => {
    const machinePaths = [
      `${S}${WORKSPACE}${S}${SIBLING}${S}x`, `${S}root${S}.cache`, `${S}home${S}alice${S}src`, `..${S}${SIBLING}${S}x.md`,
    ];
    for (const path of [...machinePaths, 'C:\\Users\\bob']) {
      expect({ path, found: MACHINE_PATH.test(path) }).toEqual({ path, found: true });
    }
    for (const path of ['/opt/ml/models', '/dev/shm', `${S}home${S}me${S}mme-local-models`, '/usr/bin/env', `src${S}${WORKSPACE}${S}x`]) {
      expect({ path, found: MACHINE_PATH.test(path) }).toEqual({ path, found: false });
    }
  });

  it('no tracked file cites the notes gathered outside the repository: it cites upstream (owner/repo:path:line) instead', () => {
    // The note files' names, assembled from parts like the paths above.
    const notes = [['sagemaker-mme', 'contract'], ['triton-validation', 'rules'], ['triton-model-config', 'fields'],
      ['aws-anchors-and', 'user-pain']].map((parts) => `${parts.join('-')}.md`);
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f && existsSync(join(ROOT, f)));
    expect(linesMatching(files, (line) => notes.some((note) => line.includes(note)))).toEqual([]);
  });

  it('no tracked file names an absolute path of one machine (upstream configs in test/real-world/cases are verbatim)', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f && !f.startsWith('test/real-world/cases/') && existsSync(join(ROOT, f)));
    expect(linesMatching(files, (line) => MACHINE_PATH.test(line))).toEqual([]);
  });
});

/** `file:line: text` of each line of the text files among `files` that `matches`. */
function linesMatching(files: string[], matches: (line: string) => boolean): string[] {
  const found: string[] = [];
  for (const file of files) {
    const bytes = readFileSync(join(ROOT, file));
    if (bytes.includes(0)) continue; // binary
    bytes
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        if (matches(line)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
  }
  return found;
}
