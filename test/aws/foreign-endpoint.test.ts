// AWS_ENDPOINT_URL (or --endpoint-url) pointed at something that is not AWS: a web server answering a 404 page, a
// server answering 200 with garbage, a port that closes every connection. Each gives one line naming the URL, what
// came back and which setting to check, never the SDK's "Deserialization error ... {error}.$response" internals.

import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { spawnCli } from '../cli/cli-process';
import { runCli } from '../cli/run-cli';

interface Loopback {
  readonly url: string;
  close(): Promise<void>;
}

function listen(server: Server | NetServer): Promise<Loopback> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise((done) => server.close(() => done())),
      }),
    ),
  );
}

/** A web server: every request gets an HTML 404 page (with a control character, which must come out escaped). */
const htmlServer = () =>
  listen(
    createHttpServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html>\x1b<body>Not Found</body></html>')),
  );
/** A server answering 200 with text that is neither JSON nor XML. */
const garbageServer = () => listen(createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello')));
/** A port that accepts and at once closes every connection. */
const closingServer = () => {
  const server = createNetServer((socket) => socket.destroy());
  return listen(server);
};

const VARIABLES = ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_SAGEMAKER'] as const;
const saved = Object.fromEntries(VARIABLES.map((v) => [v, process.env[v]]));
afterEach(() => {
  for (const v of VARIABLES) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});

/** The one line on stderr, checked to be exactly one line, with no SDK internals in it. */
async function oneLine(args: string[]): Promise<{ code: number; line: string }> {
  const run = await runCli(args, { env: process.env });
  expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(run.stderr).not.toMatch(/Deserialization error|\$response|SyntaxError|UnknownError/);
  return { code: run.code, line: run.stderr.trimEnd() };
}

describe('an endpoint URL that is not AWS', () => {
  it('status: an HTML 404 page is named with its status, content type and first characters', async () => {
    const server = await htmlServer();
    try {
      process.env.AWS_ENDPOINT_URL = server.url;
      const { code, line } = await oneLine(['status', '--endpoint', 'e']);
      expect(code).toBe(2);
      expect(line).toBe(
        `mme-deploy: ${server.url} is not an AWS endpoint: sagemaker:DescribeEndpoint got HTTP 404 text/html with ` +
          '"<html>\\x1b<body>Not Found</body></h..."; check AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_SAGEMAKER (unset them to reach AWS).',
      );
    } finally {
      await server.close();
    }
  });

  it('list --endpoint: 200 with a body that is not JSON', async () => {
    const server = await garbageServer();
    try {
      process.env.AWS_ENDPOINT_URL_SAGEMAKER = server.url;
      const { code, line } = await oneLine(['list', '--endpoint', 'e']);
      expect(code).toBe(2);
      expect(line).toBe(
        `mme-deploy: ${server.url} is not an AWS endpoint: sagemaker:DescribeEndpoint got HTTP 200 text/plain with "hello"; ` +
          'check AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_SAGEMAKER (unset them to reach AWS).',
      );
    } finally {
      await server.close();
    }
  });

  it.each([
    ['AWS_ENDPOINT_URL', (url: string) => ((process.env.AWS_ENDPOINT_URL = url), [])],
    ['--endpoint-url', (url: string) => ['--endpoint-url', url]],
  ])('list --s3 through %s: the 404 page, not "NotFound: UnknownError"', async (_how, point) => {
    const server = await htmlServer();
    try {
      const { code, line } = await oneLine(['list', '--s3', 's3://models/p/', ...point(server.url)]);
      expect(code).toBe(2);
      expect(line).toBe(
        `mme-deploy: ${server.url} is not an AWS endpoint: s3:ListBucket got HTTP 404 text/html with ` +
          '"<html>\\x1b<body>Not Found</body></h..."; check AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_S3, or --endpoint-url ' +
          '(unset them to reach AWS).',
      );
    } finally {
      await server.close();
    }
  });

  // Real processes: in jest's module sandbox the SDK cannot tell Node's socket errors for errors (another realm) and
  // wraps them without their code, which no user ever sees.
  it.each([
    ['status', ['status', '--endpoint', 'e'], 'sagemaker:DescribeEndpoint for endpoint e', 'AWS_ENDPOINT_URL_SAGEMAKER'],
    ['list --s3', ['list', '--s3', 's3://models/p/'], 's3:ListBucket for s3://models/p/', 'AWS_ENDPOINT_URL_S3, or --endpoint-url'],
  ])('%s: a port that closes the connection is named, with the setting to check', async (_name, args, call, variable) => {
    const server = await closingServer();
    try {
      const run = spawnCli(args, { env: { ...process.env, AWS_ENDPOINT_URL: server.url } });
      expect(await run.exit).toBe(2);
      expect(run.err()).toBe(
        `mme-deploy: ${server.url} closed the connection without an answer (ECONNRESET) on ${call}: it is no AWS endpoint; ` +
          `check AWS_ENDPOINT_URL and ${variable} (unset them to reach AWS).\n`,
      );
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a refused port (nothing listening) is named too', async () => {
    const server = await closingServer();
    const url = server.url;
    await server.close();
    const run = spawnCli(['status', '--endpoint', 'e'], { env: { ...process.env, AWS_ENDPOINT_URL: url } });
    expect(await run.exit).toBe(2);
    expect(run.err()).toBe(
      `mme-deploy: ${url} refused the connection (ECONNREFUSED) on sagemaker:DescribeEndpoint for endpoint e: it is no AWS ` +
        'endpoint; check AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_SAGEMAKER (unset them to reach AWS).\n',
    );
  }, 60_000);

  it('--endpoint-url without a scheme is a one-line usage error, exit 2, before any request', async () => {
    const run = await runCli(['list', '--s3', 's3://models/p/', '--endpoint-url', 'localhost:4569'], { env: process.env });
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: "mme-deploy: --endpoint-url: 'localhost:4569' is not an http:// or https:// URL: give the scheme, " +
        'e.g. --endpoint-url http://localhost:4569\n',
    });
  });
});
