// The two scripts that keep the image repeatable, run offline: scripts/pin-base-image.sh (tag and digest of the base)
// and scripts/lock-image-requirements.sh (wheel hashes). The registry lookups they make are replaced by stub `docker`
// and `python3` executables on a PATH of their own; what is tested is argument handling and the rewrite.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { itWithTools } from '../tools';
import { loadScaled } from '../load-scale';

const ROOT = resolve(__dirname, '../..');
const PIN = join(ROOT, 'scripts/pin-base-image.sh');
const LOCK = join(ROOT, 'scripts/lock-image-requirements.sh');
const TOOLS = ['bash', 'sed', 'grep', 'head', 'mktemp', 'mv', 'chmod', 'rm', 'cut', 'sha256sum', 'dirname', 'mkdir'];
const DIGEST = `sha256:${'ab'.repeat(32)}`;

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function which(tool: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  }
  return undefined;
}

/** A work directory with a bin/ of the host tools the scripts use, plus any stubs given. */
function sandbox(stubs: Record<string, string> = {}): { root: string; bin: string } {
  const root = mkdtempSync(join(tmpdir(), 'mme-pin-'));
  dirs.push(root);
  const bin = join(root, 'bin');
  mkdirSync(bin);
  for (const tool of TOOLS) {
    const found = which(tool);
    if (found) symlinkSync(found, join(bin, tool));
  }
  for (const [name, body] of Object.entries(stubs)) {
    writeFileSync(join(bin, name), `#!${which('bash')}\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return { root, bin };
}

function run(script: string, args: string[], bin: string) {
  const result = spawnSync(which('bash')!, [script, ...args], { env: { PATH: bin }, encoding: 'utf8', timeout: loadScaled(20_000) });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function dockerfileCopy(root: string): string {
  const path = join(root, 'Dockerfile');
  copyFileSync(join(ROOT, 'triton-image/Dockerfile'), path);
  return path;
}

describe('scripts/pin-base-image.sh', () => {
  it('rewrites TRITON_VERSION and BASE_DIGEST together and leaves every other line as it was', () => {
    const { root, bin } = sandbox();
    const dockerfile = dockerfileCopy(root);
    const before = readFileSync(dockerfile, 'utf8').split('\n');
    const result = run(PIN, ['24.10', '--digest', DIGEST, '--dockerfile', dockerfile], bin);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`nvcr.io/nvidia/tritonserver:24.10-py3@${DIGEST}`);
    const after = readFileSync(dockerfile, 'utf8').split('\n');
    expect(after).toContain('ARG TRITON_VERSION=24.10');
    expect(after).toContain(`ARG BASE_DIGEST=${DIGEST}`);
    const changed = after.filter((line, i) => line !== before[i]);
    expect(changed).toEqual(['ARG TRITON_VERSION=24.10', `ARG BASE_DIGEST=${DIGEST}`]);
  });

  it('reads the index digest from `docker buildx imagetools inspect`', () => {
    const { root, bin } = sandbox({
      docker: [
        'if [[ "$1 $2" == "buildx version" ]]; then echo "github.com/docker/buildx v0.17.1"; exit 0; fi',
        'if [[ "$1 $2 $3 $4" == "buildx imagetools inspect nvcr.io/nvidia/tritonserver:24.09-py3" ]]; then',
        `  printf 'Name:      nvcr.io/nvidia/tritonserver:24.09-py3\\nMediaType: ` +
          `application/vnd.docker.distribution.manifest.list.v2+json\\nDigest:    ${DIGEST}\\n\\nManifests:\\n  Name: ` +
          `x@sha256:${'cd'.repeat(32)}\\n'`,
        '  exit 0',
        'fi',
        'exit 3',
      ].join('\n'),
    });
    const dockerfile = dockerfileCopy(root);
    const result = run(PIN, ['24.09', '--dockerfile', dockerfile], bin);
    expect(result.status).toBe(0);
    expect(readFileSync(dockerfile, 'utf8')).toContain(`ARG BASE_DIGEST=${DIGEST}\n`);
  });

  it('fails without a lookup tool and says to pass --digest, leaving the Dockerfile untouched', () => {
    const { root, bin } = sandbox();
    const dockerfile = dockerfileCopy(root);
    const before = readFileSync(dockerfile, 'utf8');
    const result = run(PIN, ['24.09', '--dockerfile', dockerfile], bin);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/neither docker buildx nor skopeo[\s\S]*--digest sha256:/);
    expect(readFileSync(dockerfile, 'utf8')).toBe(before);
  });

  it.each([
    ['no version', [] as string[], /usage:/],
    ['a version that is not YY.MM', ['24.9'], /not of the form YY\.MM/],
    ['a digest that is not sha256', ['24.09', '--digest', 'sha256:XYZ'], /not of the form sha256:<64 lowercase hex digits>/],
    ['--digest without a value', ['24.09', '--digest'], /usage:/],
    ['an unknown option', ['24.09', '--force'], /unknown option --force/],
    ['two versions', ['24.09', '24.10'], /usage:/],
  ])('exits 2 on %s', (_title, args, message) => {
    const { bin } = sandbox();
    const result = run(PIN, args, bin);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('refuses a Dockerfile without exactly one line to rewrite', () => {
    const { root, bin } = sandbox();
    const dockerfile = join(root, 'Dockerfile');
    writeFileSync(dockerfile, 'ARG TRITON_VERSION=24.09\nFROM scratch\n');
    const result = run(PIN, ['24.09', '--digest', DIGEST, '--dockerfile', dockerfile], bin);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("exactly one 'ARG BASE_DIGEST=' line (found 0)");
    expect(readFileSync(dockerfile, 'utf8')).toBe('ARG TRITON_VERSION=24.09\nFROM scratch\n');
  });
});

// A stand-in for `python3 -m pip download`: writes a wheel named for the requirement and Python version whose bytes
// are that name, so its sha256 is known to the test.
const PIP_STUB = [
  'dest="" req="" pyv=""',
  'while (($#)); do',
  '  case "$1" in',
  '    --dest) dest=$2; shift 2 ;;',
  '    --python-version) pyv=$2; shift 2 ;;',
  '    --implementation | --platform) shift 2 ;;',
  '    -*|pip|download) shift ;;',
  '    *) req=$1; shift ;;',
  '  esac',
  'done',
  '[[ "$req" != broken* ]] || exit 1',
  'name=${req%%==*}; ver=${req#*==}; tag=cp${pyv/./}',
  'printf %s "$name-$ver-$tag" > "$dest/$name-$ver-$tag-$tag-manylinux_2_17_x86_64.whl"',
].join('\n');

describe('scripts/lock-image-requirements.sh', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  it('adds the hash of each wheel for the Python asked for, keeping the hashes already there', () => {
    const { root, bin } = sandbox({ python3: PIP_STUB });
    const requirements = join(root, 'requirements.txt');
    const old = 'f'.repeat(64);
    writeFileSync(
      requirements,
      `# header\n\n# numpy-1.26.4-cp310-x.whl\nnumpy==1.26.4 \\\n    --hash=sha256:${old}\n# note\ntokenizers==0.20.3\n`,
    );
    const result = run(LOCK, ['3.12', '--requirements', requirements], bin);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(readFileSync(requirements, 'utf8')).toBe(
      '# header\n\n# numpy-1.26.4-cp310-x.whl\n' +
        '# numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.whl\n' +
        `numpy==1.26.4 \\\n    --hash=sha256:${old} \\\n    --hash=sha256:${sha256('numpy-1.26.4-cp312')}\n` +
        '# note\n# tokenizers-0.20.3-cp312-cp312-manylinux_2_17_x86_64.whl\n' +
        `tokenizers==0.20.3 \\\n    --hash=sha256:${sha256('tokenizers-0.20.3-cp312')}\n`,
    );
    // Locking again for the same Python changes nothing.
    const once = readFileSync(requirements, 'utf8');
    expect(run(LOCK, ['3.12', '--requirements', requirements], bin).status).toBe(0);
    expect(readFileSync(requirements, 'utf8')).toBe(once);
  });

  it('fails without touching the file when a wheel cannot be downloaded', () => {
    const { root, bin } = sandbox({ python3: PIP_STUB });
    const requirements = join(root, 'requirements.txt');
    writeFileSync(requirements, 'broken==1.0\n');
    const result = run(LOCK, ['3.10', '--requirements', requirements], bin);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('could not download a CPython 3.10 wheel of broken==1.0');
    expect(readFileSync(requirements, 'utf8')).toBe('broken==1.0\n');
  });

  it.each([
    ['no Python version', [] as string[]],
    ['a Python version that is not 3.Y', ['310']],
    ['an unknown option', ['3.10', '--upgrade']],
  ])('exits 2 on %s', (_title, args) => {
    const { bin } = sandbox();
    expect(run(LOCK, args, bin).status).toBe(2);
  });
});

describe('the image scripts pass shellcheck', () => {
  for (const script of [PIN, LOCK]) {
    itWithTools(script, { tools: ['shellcheck'] }, (found) => {
      const result = spawnSync(found.paths.shellcheck!, [script], { encoding: 'utf8' });
      expect(result.stdout + result.stderr).toBe('');
      expect(result.status).toBe(0);
    });
  }
});
