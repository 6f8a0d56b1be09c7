import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { estimateModelMemory } from '../../lib/plan/memory-estimate';
import { readBundle } from '../../lib/plan/read-bundles';
import { tempDir } from '../archive/archive-fixtures';
import { fileMember, gzipOf, rawHeader, tarOf } from '../archive/crafted-archives';

describe('readBundle on an archive', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  function archive(name: string, bytes: Buffer): string {
    const path = join(dir.path, name);
    writeFileSync(path, bytes);
    return path;
  }

  it('counts many small weight files as their sum, without keeping each one', async () => {
    const shards = Array.from({ length: 500 }, (_, i) => fileMember(`m/2/shards/s${i}.bin`, Buffer.alloc(100)));
    const path = archive(
      'm.tar.gz',
      gzipOf(
        tarOf(
          fileMember('m/config.pbtxt', 'name: "m"\nbackend: "onnxruntime"\n'),
          fileMember('m/1/model.onnx', Buffer.alloc(5000)),
          fileMember('m/2/model.onnx', Buffer.alloc(1000)),
          fileMember('m/2/helper.py', 'x = 1\n'),
          ...shards,
        ),
      ),
    );
    const { bundle, diagnostics } = await readBundle(path);
    expect(diagnostics).toEqual([]);
    expect(bundle?.extractedBytes).toBe(5000 + 1000 + 6 + 500 * 100 + 33);
    const model = bundle!.models[0]!;
    expect(model.files.length).toBeLessThan(10);
    // The latest version (2) only: model.onnx and the shards, not helper.py.
    expect(estimateModelMemory(model)).toMatchObject({ backend: 'onnxruntime', weightBytes: 1000 + 500 * 100 });
  });

  it('refuses a config.pbtxt larger than 4 MiB without reading it', async () => {
    const path = archive(
      'big.tar.gz',
      gzipOf(Buffer.concat([rawHeader({ name: 'm/config.pbtxt', size: 3 * 2 ** 30 }), Buffer.alloc(512)])),
    );
    const { bundle, diagnostics } = await readBundle(path);
    expect(bundle).toBeUndefined();
    expect(diagnostics).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'plan-unreadable-archive',
        message: expect.stringContaining(
          'm/config.pbtxt in the archive is 3221225472 bytes; a model configuration is at most 4194304 bytes',
        ),
      }),
    ]);
  });

  it('reports a damaged archive with the reader\'s message and a missing one as unreadable input', async () => {
    const cut = gzipOf(tarOf(fileMember('m/config.pbtxt', 'name: "m"\n')));
    const damaged = await readBundle(archive('cut.tar.gz', cut.subarray(0, cut.length - 3)));
    expect(damaged.diagnostics[0]).toMatchObject({
      code: 'plan-unreadable-archive',
      message: expect.stringContaining('gzip stream: it is cut short'),
    });
    const missing = await readBundle(join(dir.path, 'missing.tar.gz'));
    expect(missing.diagnostics[0]).toMatchObject({ code: 'plan-unreadable-input' });
  });
});
