// `mme-deploy smoke` end to end against the loopback MME stand-in (reached through AWS_ENDPOINT_URL): good archives
// pass with every output checked, and each seeded failure fails the run with its cause and fix.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../cli/run-cli';
import { MmeStandIn, StandInFault } from '../stand-in/mme-stand-in';
import { ArchiveSpec, classifier, withTextSample, withWarmup, writeArchives } from '../stand-in/archives';

let standIn: MmeStandIn;
let dir: string;
const saved = process.env.AWS_ENDPOINT_URL;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smoke-'));
  standIn = new MmeStandIn({ capacity: 8, loadMs: 30 });
  const archives: [string, ArchiveSpec, StandInFault?][] = [
    ['classifier.tar.gz', classifier('classifier')],
    ['warmup.tar.gz', withWarmup('warm')],
    ['text.tar.gz', withTextSample('text')],
    ['load-fails.tar.gz', classifier('broken'), 'load-fails'],
    ['oom.tar.gz', classifier('huge'), 'out-of-memory'],
    ['wrong-shape.tar.gz', classifier('shape'), 'wrong-shape'],
    ['wrong-datatype.tar.gz', classifier('dtype'), 'wrong-datatype'],
    ['missing-output.tar.gz', classifier('missing'), 'missing-output'],
  ];
  const paths = writeArchives(dir, Object.fromEntries(archives.map(([name, spec]) => [name, spec])));
  for (const [name, , fault] of archives) await standIn.addArchive(name, paths[name]!, fault);
  process.env.AWS_ENDPOINT_URL = await standIn.start();
});
afterAll(async () => {
  if (saved === undefined) delete process.env.AWS_ENDPOINT_URL;
  else process.env.AWS_ENDPOINT_URL = saved;
  await standIn.stop();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => standIn.reset());

const smoke = (...args: string[]) => runCli(['smoke', '--endpoint', 'mme', ...args]);

describe('smoke against the stand-in', () => {
  it('passes good archives: one cold and N warm calls each, every output checked', async () => {
    const run = await smoke('classifier.tar.gz', 'warmup.tar.gz', 'text.tar.gz', '--warm', '3', '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ site: 'endpoint mme', passed: 3, failed: 0 });
    const [plain, warmup, text] = report.results;
    expect(plain).toMatchObject({ targetModel: 'classifier.tar.gz', ok: true, inputs: 'generated', outputsChecked: 8 });
    expect(plain.warm.count).toBe(3);
    // The first call found the model unloaded and waited for its 30 ms load.
    expect(plain.coldMs).toBeGreaterThanOrEqual(25);
    expect(warmup).toMatchObject({ ok: true, inputs: "warmup 'sample'", outputsChecked: 4 });
    expect(text).toMatchObject({ ok: true, inputs: 'generated', outputsChecked: 4 });
    expect(standIn.invocations.get('classifier.tar.gz')).toBe(4);
  });

  it('sends the warmup samples as Triton builds them, and a BYTES sample file beside the config', async () => {
    await smoke('warmup.tar.gz', 'text.tar.gz', '--warm', '0');
    const warm = standIn.lastRequest.get('warmup.tar.gz')!;
    const x = warm.inputs.find((t) => t.name === 'X')!;
    const pixels = warm.inputs.find((t) => t.name === 'PIXELS')!;
    // [1] + the sample's dims, since the model batches; the file's first 4 bytes (it has 6).
    expect(x).toMatchObject({ datatype: 'FP32', shape: [1, 5] });
    expect(pixels).toMatchObject({ datatype: 'UINT8', shape: [1, 4], data: [1, 2, 3, 4] });
    const text = standIn.lastRequest.get('text.tar.gz')!.inputs[0]!;
    expect(text.shape).toEqual([1]);
    expect(Buffer.from(text.data[0] as Uint8Array).toString()).toBe('The quick brown fox');
  });

  it('takes variable dims from --shape', async () => {
    const run = await smoke('text.tar.gz', '--warm', '0', '--shape', 'TEXT=3');
    expect(run.code).toBe(0);
    expect(standIn.lastRequest.get('text.tar.gz')!.inputs[0]!.shape).toEqual([3]);
    const bad = await smoke('text.tar.gz', '--shape', 'TEXT=3,2');
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("--shape TEXT=3,2 does not fit input 'TEXT'");
  });

  it.each([
    ['load-fails.tar.gz', 'ModelError 400', /did not load: check it with `mme-deploy validate --mme <repository>`/],
    ['oom.tar.gz', 'ModelError 507', /Out of GPU or host memory loading oom\.tar\.gz .*CUDA out of memory/],
    ['wrong-shape.tar.gz', 'wrong-shape', /output 'SCORES' has shape \[1, 2, 2\], but model 'shape' declares \[1, 2\]/],
    ['wrong-datatype.tar.gz', 'wrong-datatype', /output 'SCORES' is INT32, but model 'dtype' declares TYPE_FP32/],
    ['missing-output.tar.gz', 'missing-output', /output 'LABEL' declared by model 'missing' was not returned/],
    ['absent.tar.gz', 'not-found', /s3:\/\/models-bucket\/mme\/absent\.tar\.gz does not exist, .*`mme-deploy list --endpoint mme`/],
  ])('explains %s and exits 1', async (target, cause, explanation) => {
    const run = await smoke('classifier.tar.gz', target, '--warm', '1');
    expect(run.code).toBe(1);
    const failure = run.stdout.slice(run.stdout.indexOf(`\n${target}:\n`));
    expect(failure).toContain(cause);
    expect(failure).toMatch(explanation);
    expect(run.stdout).toMatch(/^classifier\.tar\.gz .* ok$/m);
    expect(run.stdout).toMatch(new RegExp(`^${target.replace(/\./g, '\\.')} .* FAILED$`, 'm'));
    expect(run.stdout).toContain('1 of 2 TargetModels passed on endpoint mme; 1 failed.');
  });

  it('lists every TargetModel under the prefix when none is named', async () => {
    const run = await smoke('--json', '--warm', '0');
    const report = JSON.parse(run.stdout);
    expect(report.results.map((r: { targetModel: string }) => r.targetModel)).toEqual([
      'classifier.tar.gz', 'load-fails.tar.gz', 'missing-output.tar.gz', 'oom.tar.gz', 'text.tar.gz', 'warmup.tar.gz',
      'wrong-datatype.tar.gz', 'wrong-shape.tar.gz',
    ]);
    expect(report.passed).toBe(3);
    expect(run.code).toBe(1);
  });

  it('refuses an endpoint that does not exist with one sentence', async () => {
    const run = await runCli(['smoke', '--endpoint', 'nope']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("mme-deploy: Endpoint 'nope' does not exist. Check the name and --region (aws sagemaker list-endpoints).\n");
  });
});
