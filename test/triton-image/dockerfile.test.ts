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
    expect(globalArgs.get('BASE_IMAGE')).toBe('nvcr.io/nvidia/tritonserver:${TRITON_VERSION}-py3${BASE_DIGEST:+@}${BASE_DIGEST}');
  });

  it('pins the default base by digest next to its tag, or says it is not pinned yet', () => {
    const first = dockerfile.findIndex((i) => i.keyword === 'FROM');
    const digestArg = dockerfile.slice(0, first).find((i) => i.keyword === 'ARG' && i.args.startsWith('BASE_DIGEST'));
    expect(digestArg).toBeDefined();
    const digest = keyValues(digestArg!.args).get('BASE_DIGEST');
    expect(digest).toMatch(/^(sha256:[0-9a-f]{64})?$/);
    // An unpinned build says so in its log rather than passing silently.
    expect(dockerfile.some((i) => i.keyword === 'RUN' && /-z "\$\{BASE_DIGEST\}"[\s\S]*not pinned by digest/.test(i.args))).toBe(true);
  });

  it('stops a build whose base is another Triton release than TRITON_VERSION says', () => {
    const guard = dockerfile.find((i) => i.keyword === 'RUN' && i.args.includes('NVIDIA_TRITON_SERVER_VERSION'));
    expect(guard?.args).toMatch(/"\$\{NVIDIA_TRITON_SERVER_VERSION\}" != "\$\{TRITON_VERSION\}"[\s\S]*exit 1/);
  });

  it('builds from the BASE_IMAGE argument in a single stage', () => {
    expect(dockerfile.filter((i) => i.keyword === 'FROM').map((i) => i.args)).toEqual(['${BASE_IMAGE}']);
  });

  it('carries both SageMaker capability labels', () => {
    const labels = new Map(dockerfile.filter((i) => i.keyword === 'LABEL').flatMap((i) => [...keyValues(i.args)]));
    expect(labels.get('com.amazonaws.sagemaker.capabilities.multi-models')).toBe('true');
    expect(labels.get('com.amazonaws.sagemaker.capabilities.accept-bind-to-port')).toBe('true');
  });

  it('installs our serve on PATH as the command SageMaker runs', () => {
    const copies = dockerfile.filter((i) => i.keyword === 'COPY').map((i) => i.args.split(/\s+/));
    expect(copies).toContainEqual(['serve', '/usr/bin/serve']);
    expect(dockerfile.some((i) => i.keyword === 'RUN' && /chmod 0?755 \/usr\/bin\/serve/.test(i.args))).toBe(true);
    const cmds = dockerfile.filter((i) => i.keyword === 'CMD');
    expect(cmds.map((i) => JSON.parse(i.args))).toEqual([['serve']]);
  });

  // NGC's entrypoint sources /opt/nvidia/entrypoint.d/*.sh, which enable the CUDA compat libraries on an older driver
  // (g4dn's default 470), then execs its arguments; an image that replaces it runs CUDA 12 on 470 without them.
  it('keeps NGC\'s entrypoint, so CUDA forward compatibility is set up before serve', () => {
    const entrypoints = dockerfile.filter((i) => i.keyword === 'ENTRYPOINT');
    expect(entrypoints).toHaveLength(1);
    const entrypoint = entrypoints[0]!.args;
    expect(entrypoint.startsWith('[')).toBe(true); // the exec form: the shell form would run /bin/sh -c first
    expect((JSON.parse(entrypoint) as string[])[0]).toBe('/opt/nvidia/nvidia_entrypoint.sh');
    // The build fails on a base without it instead of producing an image that cannot start.
    expect(dockerfile.some((i) => i.keyword === 'RUN' && /! -x \/opt\/nvidia\/nvidia_entrypoint\.sh[\s\S]*exit 1/.test(i.args))).toBe(true);
  });

  it('installs requirements.txt into the image\'s own Python', () => {
    const copy = dockerfile.find((i) => i.keyword === 'COPY' && i.args.startsWith('requirements.txt '));
    expect(copy).toBeDefined();
    const target = copy!.args.split(/\s+/)[1]!;
    const install = dockerfile.find(
      (i) => i.keyword === 'RUN' && i.args.includes('python3 -m pip install') && i.args.includes(`-r ${target}`),
    );
    expect(install).toBeDefined();
    for (const flag of ['--require-hashes', '--only-binary=:all:', '--no-deps']) expect(install!.args).toContain(flag);
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
  // Requirements with their `\`-continued options joined, comments dropped.
  const requirements = readFileSync(resolve(IMAGE_DIR, 'requirements.txt'), 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
  const lines = requirements.map((line) => line.split(/\s+/)[0]!);

  it('pins every requirement to one exact version', () => {
    expect(lines.length).toBeGreaterThan(0);
    const unpinned = lines.filter((line) => !/^[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][0-9A-Za-z.+!-]*$/.test(line));
    expect(unpinned).toEqual([]);
  });

  it('gives every requirement at least one sha256 and nothing else', () => {
    for (const requirement of requirements) {
      const options = requirement.split(/\s+/).slice(1);
      expect(options.length).toBeGreaterThan(0);
      for (const option of options) expect(option).toMatch(/^--hash=sha256:[0-9a-f]{64}$/);
    }
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
