import { join } from 'node:path';
import type { CliIo } from '../../lib/cli/io';
import { main } from '../../lib/cli/program';
import { FIXTURES } from '../repository/ensemble-fixtures';

/** Runs `mme-deploy <args>` in-process from the fixtures directory. */
async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    isTTY: false,
    env: {},
    cwd: FIXTURES,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

describe('mme-deploy graph', () => {
  it('prints seed 000\'s ensemble_hf as a mermaid flowchart by default', async () => {
    const { code, stdout, stderr } = await run('graph', 'ensemble-seed-hf');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout.startsWith('flowchart LR\n')).toBe(true);
    expect(stdout).toContain('subgraph e0 ["ensemble (max_batch_size 16)"]');
    expect(stdout).toContain('-->|"token_ids<br/>INT32 [128]"|');
    expect(stdout).toContain('-->|"finaloutput<br/>FP32 [384]"|');
  });

  it('prints dot with --format dot', async () => {
    const { code, stdout } = await run('graph', 'ensemble-seed-dali-inception', '--format', 'dot');
    expect(code).toBe(0);
    expect(stdout.startsWith('digraph "ensemble_dali_inception" {\n')).toBe(true);
    expect(stdout).toContain('[label="preprocessed_image\\nFP32 [299,299,3]"]');
  });

  it('draws the top-level ensemble first and the ensembles it runs beside it', async () => {
    const { stdout } = await run('graph', 'ensemble-nested');
    const titles = [...stdout.matchAll(/subgraph e\d+ \["([^ ]+)/g)].map((m) => m[1]);
    expect(titles).toEqual(['outer', 'inner']);
  });

  it('draws only the ensemble named by --ensemble (and what it runs)', async () => {
    const { code, stdout } = await run('graph', 'ensemble-nested', '--ensemble', 'inner');
    expect(code).toBe(0);
    expect([...stdout.matchAll(/subgraph e\d+ \["([^ ]+)/g)].map((m) => m[1])).toEqual(['inner']);
  });

  it('still draws a broken ensemble, and says on stderr how many problems it has', async () => {
    const { code, stdout, stderr } = await run('graph', 'ensemble-output-not-written');
    expect(code).toBe(0);
    expect(stdout).toContain('(never written)');
    expect(stderr).toContain('3 problems in the drawn ensemble');
    expect(stderr).toContain('mme-deploy validate ensemble-output-not-written');
  });

  it('exits 2 for a path that does not exist', async () => {
    const { code, stdout, stderr } = await run('graph', 'no-such-repository');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('no-such-repository: no such file or directory');
    expect(stderr).not.toContain(FIXTURES);
  });

  it('exits 2 for an unknown format', async () => {
    const { code, stderr } = await run('graph', 'ensemble-seed-hf', '--format', 'png');
    expect(code).toBe(2);
    expect(stderr).toContain('Allowed choices are mermaid, dot');
  });

  it('exits 1 when the repository holds no ensemble', async () => {
    const { code, stdout, stderr } = await run('graph', join('ensemble-valid-pipeline', 'net'));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('No ensemble in ensemble-valid-pipeline/net');
    expect(stderr).toContain('(net)');
  });

  it('exits 2 (a usage error) when --ensemble names a model that is not an ensemble, listing the ensembles', async () => {
    const { code, stderr } = await run('graph', 'ensemble-nested', '--ensemble', 'post');
    expect(code).toBe(2);
    expect(stderr).toContain("'post' is not an ensemble");
    expect(stderr).toContain('inner, outer');
  });

  it('exits 2 (a usage error) when --ensemble names no model', async () => {
    const { code, stderr } = await run('graph', 'ensemble-nested', '--ensemble', 'nope');
    expect(code).toBe(2);
    expect(stderr).toContain("no model named 'nope'");
  });
});
