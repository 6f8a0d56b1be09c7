// The complete example packages: `packRepository` (what `mme-deploy package` runs) accepts it, and GNU tar extracts
// an archive with the four model directories at its root, the ensemble's empty-but-for-a-README version directory
// included, that validates again as an MME archive.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packRepository } from '../../lib/bundle/pack-repository';
import { validateRepository } from '../../lib/repository/validate';
import { EXAMPLES_DIR } from './example-repositories';

const REPO = join(EXAMPLES_DIR, 'sentiment_onnx');
const MODEL_FILES = [
  'ensemble/config.pbtxt',
  'ensemble/1/README.md',
  'preprocess/config.pbtxt',
  'preprocess/1/model.py',
  'preprocess/vocab.txt',
  'classifier/config.pbtxt',
  'classifier/1/model.onnx',
  'postprocess/config.pbtxt',
  'postprocess/1/model.py',
  'postprocess/labels.txt',
];

describe('sentiment_onnx package', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'mme-sentiment-package-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('packs into sentiment_onnx.tar.gz that GNU tar extracts to the same model files, valid as an MME archive', async () => {
    const result = await packRepository(REPO);
    if (!result.ok) throw new Error(result.report.diagnostics.map((d) => d.message).join('\n'));
    const chunks: Buffer[] = [];
    for await (const chunk of result.stream) chunks.push(chunk as Buffer);
    const manifest = await result.manifest;
    expect(result.targetModel).toBe('sentiment_onnx.tar.gz');
    expect(manifest.models.map((m) => m.name).sort()).toEqual(['classifier', 'ensemble', 'postprocess', 'preprocess']);
    expect(manifest.size).toBeLessThan(2 * 1024 * 1024);

    const archive = join(work, result.targetModel);
    writeFileSync(archive, Buffer.concat(chunks));
    const out = join(work, 'extracted');
    mkdirSync(out);
    const tar = spawnSync('tar', ['-xzf', archive, '-C', out], { encoding: 'utf8' });
    expect(tar.stderr).toBe('');
    expect(tar.status).toBe(0);
    for (const file of MODEL_FILES) expect(readFileSync(join(out, file)).equals(readFileSync(join(REPO, file)))).toBe(true);

    const again = await validateRepository(out, { mme: true, targetModel: result.targetModel });
    expect(again.diagnostics).toEqual([]);
  });
});
