// The docs' own `docker run` lines start the local container as SageMaker starts an endpoint's: no larger /dev/shm.

import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const DOCS = [
  'README.md',
  'triton-image/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Every `docker run` command in a file, its `\`-continued lines joined. */
function dockerRuns(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => /^\s*(\$\s*)?docker run\b/.test(line));
}

describe('docker run in the docs', () => {
  it('finds the local container commands it checks', () => {
    expect(dockerRuns(readFileSync(join(ROOT, 'docs/local.md'), 'utf8')).length).toBeGreaterThan(0);
    expect(dockerRuns(readFileSync(join(ROOT, 'README.md'), 'utf8')).length).toBeGreaterThan(0);
  });

  it.each(DOCS)('%s never gives the container more /dev/shm than an endpoint has', (file) => {
    const offending = dockerRuns(readFileSync(join(ROOT, file), 'utf8')).filter((line) => /--shm-size|--ipc[= ]host/.test(line));
    expect(offending).toEqual([]);
  });
});
