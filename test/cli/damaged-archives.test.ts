// `plan` and `local load` on every damaged or hostile archive of issue 14: each ends quickly with exit 1 or 2 and one
// line naming the problem, and leaves nothing behind (no staging directory in --models-dir, no request to load).

import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '../archive/archive-fixtures';
import { craftedCases, fileMember, gzipOf, member, tarOf } from '../archive/crafted-archives';
import { runCli } from './run-cli';

/** Archives the reader accepts but extraction refuses (local load extracts links that stay inside the archive). */
const UNSAFE: { name: string; bytes: Buffer; message: RegExp }[] = [
  {
    name: 'a "../" path',
    bytes: gzipOf(tarOf(fileMember('m/config.pbtxt', 'x'), member({ name: '../escaped.txt', size: 2 }, 'no'))),
    message: /entry "..\/escaped.txt" has a ".." segment/,
  },
  {
    name: 'a symbolic link',
    bytes: gzipOf(tarOf(member({ name: 'm/passwd', typeflag: '2', linkName: '/etc/passwd' }))),
    message: /entry "m\/passwd" is a symbolic link/,
  },
  {
    name: 'a hard link to a file outside the archive',
    bytes: gzipOf(tarOf(fileMember('m/a', 'x'), member({ name: 'm/b', typeflag: '1', linkName: '../../etc/passwd' }))),
    message: /entry "m\/b" is a hard link to "..\/..\/etc\/passwd", outside the archive/,
  },
];

describe('plan and local load on damaged and hostile archives', () => {
  let dir: ReturnType<typeof tempDir>;
  let server: Server;
  let url: string;
  let requests: string[];
  beforeAll(async () => {
    dir = tempDir();
    requests = [];
    // A stand-in container with nothing loaded: GET /models/<hash> answers 404, and any other request is recorded.
    server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(req.method === 'GET' ? 404 : 500).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((done) => server.close(() => done()));
    dir.cleanup();
  });

  const cases = [
    ...craftedCases().map((c) => ({
      name: c.name,
      bytes: c.bytes,
      message: c.message,
      plan: c.name.includes('3 GiB') ? /at most 4194304 bytes/ : c.message,
    })),
    ...UNSAFE.map((c) => ({ ...c, plan: undefined })),
  ];

  it.each(cases.map((c, i) => [c.name, i] as const))('%s', async (_name, index) => {
    const crafted = cases[index]!;
    const archive = join(dir.path, `case-${index}.tar.gz`);
    writeFileSync(archive, crafted.bytes);

    if (crafted.plan) {
      const plan = await runCli(['plan', archive], { cwd: dir.path });
      expect([1, 2]).toContain(plan.code);
      const lines = plan.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(crafted.plan);
      expect(lines[0]).not.toMatch(/internal error|\n {4}at /);
    }

    const models = join(dir.path, `models-${index}`);
    mkdirSync(models);
    requests.length = 0;
    const load = await runCli(['local', 'load', archive, '--url', url, '--models-dir', models], { cwd: dir.path });
    expect([1, 2]).toContain(load.code);
    const lines = load.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(crafted.message);
    expect(readdirSync(models)).toEqual([]);
    expect(requests.filter((r) => !r.startsWith('GET '))).toEqual([]);
  });
});
