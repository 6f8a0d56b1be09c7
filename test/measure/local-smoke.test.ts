// `mme-deploy local smoke` against a stand-in of a local container's SageMaker port (POST /models/<hash>/invoke):
// the configs come from what `local load` extracted into --models-dir; a 507 is explained as `local invoke` does.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryJsonContentType, decodeInferenceRequest } from '../../lib/kserve/kserve-codec';
import { modelHash, STAGE_RECORD } from '../../lib/local/model-store';
import { classifier } from '../stand-in/archives';
import { runCli } from '../cli/run-cli';

let server: Server;
let url: string;
let dir: string;
const seen: string[] = [];

/** What `local load` leaves: <hash>/model/<model>/config.pbtxt and the stage record naming the TargetModel. */
function stage(targetModel: string, model: string): void {
  const hashDir = join(dir, modelHash(targetModel));
  mkdirSync(join(hashDir, 'model', model, '1'), { recursive: true });
  writeFileSync(join(hashDir, 'model', model, 'config.pbtxt'), classifier(model).config);
  writeFileSync(join(hashDir, STAGE_RECORD), JSON.stringify({ targetModel, archive: `${targetModel}` }));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'local-smoke-'));
  stage('good.tar.gz', 'good');
  stage('oom.tar.gz', 'oom');
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(req.url ?? '');
      decodeInferenceRequest(Buffer.concat(chunks), String(req.headers['content-type']));
      if (req.url === `/models/${modelHash('oom.tar.gz')}/invoke`) {
        res.writeHead(507, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: 'CUDA out of memory. Tried to allocate 1.00 GiB' }));
        return;
      }
      const blobs = [Buffer.alloc(8), Buffer.alloc(8)];
      const header = Buffer.from(JSON.stringify({ outputs: [
        { name: 'SCORES', datatype: 'FP32', shape: [1, 2], parameters: { binary_data_size: 8 } },
        { name: 'LABEL', datatype: 'INT64', shape: [1, 1], parameters: { binary_data_size: 8 } },
      ] }));
      res.writeHead(200, { 'Content-Type': binaryJsonContentType(header.length) });
      res.end(Buffer.concat([header, ...blobs]));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
  rmSync(dir, { recursive: true, force: true });
});

describe('local smoke', () => {
  it('checks every loaded model and explains the one that fails', async () => {
    const run = await runCli(['local', 'smoke', '--models-dir', dir, '--url', url, '--warm', '2']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^good\.tar\.gz +generated .* 6 +ok$/m);
    expect(run.stdout).toMatch(/^oom\.tar\.gz .* FAILED$/m);
    expect(run.stdout).toContain('HTTP 507 (out-of-memory): Out of GPU memory running oom.tar.gz (HTTP 507: CUDA out of memory.');
    expect(run.stdout).toContain('1 of 2 TargetModels passed on local container');
    expect(seen.filter((u) => u === `/models/${modelHash('good.tar.gz')}/invoke`)).toHaveLength(3);
  });

  it('refuses a TargetModel that was never loaded, naming those that were', async () => {
    const run = await runCli(['local', 'smoke', 'other.tar.gz', '--models-dir', dir, '--url', url]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('other.tar.gz was not loaded into');
    expect(run.stderr).toContain('(loaded: ');
  });
});
