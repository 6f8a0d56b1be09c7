// `local load` on an archive of 100,000 top-level directories (issue 23 item 7): refused early, naming a few.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stageArchive } from '../../lib/local/model-store';
import { directoryMember, tarOf } from '../archive/crafted-archives';
import { manyDirectories, writeHostileArchive } from './hostile-archives';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-local-bounds-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('refuses an archive of 100,000 top-level directories after the 1,001st, names five, and leaves nothing', async () => {
  const archive = writeHostileArchive(dir, 'many-top-level');
  const models = join(dir, 'models');
  const error = await stageArchive(archive, models, 'many.tar.gz').then(() => undefined, (err: Error) => err);
  expect(error?.message).toBe(
    `Could not extract ${archive}: the archive holds more than 1000 top-level entries ("d0", "d1", "d2", "d3", "d4", ...); ` +
      'a TargetModel archive holds an ensemble and the models it composes. Stopped before extracting the rest.',
  );
  expect(error?.message.length).toBeLessThan(400);
  expect(existsSync(models) ? readdirSync(models) : []).toEqual([]);
});

it('makes that archive with the bytes directory members encoded one by one would have', () => {
  const oneByOne = tarOf(...Array.from({ length: 1001 }, (_, i) => directoryMember(`d${i}`)));
  expect(manyDirectories(1001).equals(oneByOne)).toBe(true);
});
