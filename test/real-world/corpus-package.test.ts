// Every corpus repository that SageMaker loads as an MME archive goes the whole way: `package` writes it, GNU tar
// reads the same entries, and `local load`'s staging (extraction, then the MME archive rules on what Triton will see)
// accepts it. What passes `validate --mme` on real work must pass every later step too (issues 10 and 12.4).

import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { formatDiagnostic } from '../../lib/diagnostics';
import { packRepository } from '../../lib/bundle/pack-repository';
import { stageArchive } from '../../lib/local/model-store';
import {
  CorpusCase,
  generatedModels,
  loadCorpus,
  materialize,
  onnxPython,
  removeMaterialized,
  targetsOf,
} from './corpus';
import { testFor } from '../tools';

const corpus = loadCorpus();
const python = onnxPython();
const itWithOnnx = testFor({ python: ['onnx', 'numpy'] });
let onnxDir: string | undefined;
const work = mkdtempSync(join(tmpdir(), 'mme-corpus-package-'));

beforeAll(() => {
  if (python) onnxDir = generatedModels(corpus, python);
});
afterAll(() => {
  removeMaterialized();
  rmSync(work, { recursive: true, force: true });
});

/** The directories of a case validated as MME archives, when the case is one SageMaker loads. */
function mmeTargets(c: CorpusCase): string[] {
  if (!c.triton.loads || (c.expect && c.expect.exit !== 0) || (c as { pending?: string }).pending) return [];
  return targetsOf(c).filter((t) => t.mme).map((t) => t.path);
}

/** Regular files and directories GNU tar lists in an archive, without the trailing `/` of directories. */
function gnuTarList(archive: string): string[] {
  const run = spawnSync('tar', ['-tzf', archive], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`GNU tar refused ${archive}: ${run.stderr}`);
  return run.stdout.split('\n').filter(Boolean).map((p) => p.replace(/\/$/, ''));
}

const cases = corpus.cases.flatMap((c) => mmeTargets(c).map((path) => [`${c.id} ${path}`, c, path] as const));

describe('real-world MME archives, packaged and staged as local load stages them', () => {
  it('has cases to run (the corpus holds SageMaker MME repositories)', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
  });

  describe.each(cases)('%s', (name, c, path) => {
    const needsOnnx = Object.keys({ ...c.onnx, ...c.modelFiles }).length > 0;
    (needsOnnx && !python ? itWithOnnx : it)('packs, reads back with GNU tar, and stages with no error', async () => {
      const repo = join(materialize(c, onnxDir), path);
      const targetModel = `${c.id.replace(/[^A-Za-z0-9-]+/g, '-')}.tar.gz`;
      const packed = await packRepository(repo, { name: targetModel });
      if (!packed.ok) {
        const errors = packed.report.diagnostics.filter((d) => d.severity === 'error');
        throw new Error(`package refused ${name}:\n${errors.map((d) => formatDiagnostic(d)).join('\n')}`);
      }
      const archive = join(work, targetModel);
      await pipeline(packed.stream, createWriteStream(archive));
      const manifest = await packed.manifest;

      const outcome = await stageArchive(archive, join(work, 'models'), targetModel);
      const errors = outcome.diagnostics.filter((d) => d.severity === 'error');
      expect(errors.map((d) => formatDiagnostic(d))).toEqual([]);
      expect(outcome.staged).toBeDefined();
      // The reader, the extractor and GNU tar see the same entries.
      expect([...outcome.staged!.entries].map((p) => p.replace(/\/$/, '')).sort()).toEqual(gnuTarList(archive).sort());
      expect(outcome.staged!.entries.length).toBe(manifest.entries);
      rmSync(outcome.staged!.hashDir, { recursive: true, force: true });
    });
  });
});
