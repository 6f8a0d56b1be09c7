// The image's Dockerfile and requirements.txt, read as text: what SageMaker needs from the image (labels, an entrypoint
// that is our serve) and what a rebuild needs to be repeatable (pinned base version and packages).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_TRITON_VERSION } from '../../lib/catalog/triton-images';

const IMAGE_DIR = resolve(__dirname, '../../triton-image');

interface Instruction {
  keyword: string;
  args: string;
}

/** Dockerfile instructions with comments dropped and backslash continuations joined. */
function readInstructions(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = pending + line;
    pending = '';
    const match = /^(\S+)\s+([\s\S]*)$/.exec(full);
    if (match) instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim() });
  }
  return instructions;
}

/** `KEY=value` pairs of LABEL or ARG arguments, quotes removed. */
function keyValues(args: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const match of args.matchAll(/([\w.\-]+)(?:=("[^"]*"|\S*))?/g)) {
    pairs.set(match[1]!, (match[2] ?? '').replace(/^"|"$/g, ''));
  }
  return pairs;
}

const dockerfile = readInstructions(readFileSync(resolve(IMAGE_DIR, 'Dockerfile'), 'utf8'));

describe('triton-image/Dockerfile', () => {
  it('defaults to the Triton version the constructs use', () => {
    const first = dockerfile.findIndex((i) => i.keyword === 'FROM');
    const globalArgs = new Map(
      dockerfile.slice(0, first).filter((i) => i.keyword === 'ARG').flatMap((i) => [...keyValues(i.args)]),
    );
    expect(globalArgs.get('TRITON_VERSION')).toBe(DEFAULT_TRITON_VERSION);
    expect(globalArgs.get('BASE_IMAGE')).toBe('nvcr.io/nvidia/tritonserver:${TRITON_VERSION}-py3');
  });

  it('builds from the BASE_IMAGE argument in a single stage', () => {
    expect(dockerfile.filter((i) => i.keyword === 'FROM').map((i) => i.args)).toEqual(['${BASE_IMAGE}']);
  });

  it('carries both SageMaker capability labels', () => {
    const labels = new Map(dockerfile.filter((i) => i.keyword === 'LABEL').flatMap((i) => [...keyValues(i.args)]));
    expect(labels.get('com.amazonaws.sagemaker.capabilities.multi-models')).toBe('true');
    expect(labels.get('com.amazonaws.sagemaker.capabilities.accept-bind-to-port')).toBe('true');
  });

  it('installs our serve on PATH and makes it the entrypoint', () => {
    const copies = dockerfile.filter((i) => i.keyword === 'COPY').map((i) => i.args.split(/\s+/));
    expect(copies).toContainEqual(['serve', '/usr/bin/serve']);
    const entrypoints = dockerfile.filter((i) => i.keyword === 'ENTRYPOINT');
    expect(entrypoints).toHaveLength(1);
    expect(JSON.parse(entrypoints[0]!.args)).toEqual(['/usr/bin/serve']);
    expect(dockerfile.some((i) => i.keyword === 'RUN' && /chmod 0?755 \/usr\/bin\/serve/.test(i.args))).toBe(true);
  });

  it('installs requirements.txt into the image\'s own Python', () => {
    const copy = dockerfile.find((i) => i.keyword === 'COPY' && i.args.startsWith('requirements.txt '));
    expect(copy).toBeDefined();
    const target = copy!.args.split(/\s+/)[1]!;
    expect(
      dockerfile.some((i) => i.keyword === 'RUN' && i.args.includes(`python3 -m pip install`) && i.args.includes(`-r ${target}`)),
    ).toBe(true);
  });
});

describe('triton-image/.dockerignore', () => {
  it('keeps the build context to what the Dockerfile copies', () => {
    const patterns = readFileSync(resolve(IMAGE_DIR, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(patterns[0]).toBe('*');
    const kept = patterns.slice(1).map((p) => p.replace(/^!/, '')).sort();
    const copied = dockerfile
      .filter((i) => i.keyword === 'COPY')
      .map((i) => i.args.split(/\s+/)[0]!)
      .sort();
    expect(kept).toEqual(['Dockerfile', ...copied].sort());
  });
});

describe('triton-image/requirements.txt', () => {
  const lines = readFileSync(resolve(IMAGE_DIR, 'requirements.txt'), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');

  it('pins every requirement to one exact version', () => {
    expect(lines.length).toBeGreaterThan(0);
    const unpinned = lines.filter((line) => !/^[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][0-9A-Za-z.+!-]*$/.test(line));
    expect(unpinned).toEqual([]);
  });

  it('holds the packages the examples\' python models import', () => {
    const names = lines.map((line) => line.split('==')[0]!.toLowerCase());
    expect(names).toEqual(expect.arrayContaining(['numpy', 'tokenizers']));
  });

  it('lists each package once', () => {
    const names = lines.map((line) => line.split('==')[0]!.toLowerCase().replace(/[-_.]+/g, '-'));
    expect(new Set(names).size).toBe(names.length);
  });
});
