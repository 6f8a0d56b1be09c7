// The load-test client's InvokeEndpoint requests (lib/measure/signed-invoke.ts): signed with the SDK's own signer and
// checked here against another implementation of Signature Version 4, botocore's (Debian python3-botocore); signed
// headers reused within their second and signed again when the second, the body or the credentials change; the
// connection's one sweep gives up on requests past their deadline, and one abort ends all those in flight.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { InvokeConnection, InvokeSigner, SigningCredentials } from '../../lib/measure/signed-invoke';
import { serviceError } from '../../lib/measure/invoker';
import { describeWithTools } from '../tools';

const credentials: SigningCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const now = Date.parse('2026-12-01T14:30:05.123Z');
const body = Buffer.from('{"inputs":[{"name":"X","datatype":"FP32","shape":[1],"data":[1]}]}');

/** Name -> value of node:http's flat header list. */
function headerMap(flat: readonly string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) map[flat[i]!] = flat[i + 1]!;
  return map;
}

/** botocore's SigV4Auth over the same request, headers (Authorization aside) and second: its Authorization header. */
function botocoreAuthorization(python: string, url: URL, headers: Record<string, string>, token?: string): string {
  const script = `
import json, sys
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
a = json.load(sys.stdin)
request = AWSRequest(method='POST', url=a['url'], data=a['body'].encode(), headers=a['headers'])
request.context['timestamp'] = a['timestamp']
auth = SigV4Auth(Credentials(a['key'], a['secret'], a.get('token')), 'sagemaker', a['region'])
canonical = auth.canonical_request(request)
signature = auth.signature(auth.string_to_sign(request, canonical), request)
signed = auth.signed_headers(auth.headers_to_sign(request))
print('AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s, Signature=%s' % (auth.scope(request), signed, signature))
`;
  const input = { url: url.href, region: 'eu-west-1', headers, body: body.toString('utf8'), timestamp: '20261201T143005Z',
    key: credentials.accessKeyId, secret: credentials.secretAccessKey, ...(token ? { token } : {}) };
  const run = spawnSync(python, ['-c', script], { input: JSON.stringify(input), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout.trim();
}

describeWithTools('InvokeSigner against botocore', { python: ['botocore'] }, (found) => {
  it.each([
    ['https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/my-mme/invocations', undefined, undefined],
    ['http://127.0.0.1:4566/endpoints/mme-2/invocations', 'FwoGZXIvYXdzEXAMPLETOKEN', 'variant-1'],
  ])('signs %s as botocore does', async (href, sessionToken, variant) => {
    const url = new URL(href);
    const signer = new InvokeSigner(url, 'eu-west-1', variant);
    const flat = await signer.headers('model  with spaces.tar.gz', 'application/json', body,
      { ...credentials, ...(sessionToken ? { sessionToken } : {}) }, now);
    const { authorization, 'content-length': length, ...signed } = headerMap(flat);
    expect(length).toBe(String(body.length));
    expect(signed).toMatchObject({
      host: url.host,
      'x-amz-date': '20261201T143005Z',
      'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'),
      'x-amzn-sagemaker-target-model': 'model  with spaces.tar.gz',
      ...(sessionToken ? { 'x-amz-security-token': sessionToken } : {}),
      ...(variant ? { 'x-amzn-sagemaker-target-variant': variant } : {}),
    });
    expect(authorization).toBe(botocoreAuthorization(found.python!, url, signed, sessionToken));
  });
});

describe('InvokeSigner', () => {
  const url = new URL('http://127.0.0.1:4566/endpoints/mme/invocations');
  const authorization = (flat: readonly string[]) => headerMap(flat)['authorization'];

  it('reuses the signed headers within their second, for the same TargetModel, body and credentials', async () => {
    const signer = new InvokeSigner(url, 'us-east-1');
    const first = await signer.headers('a.tar.gz', 'application/json', body, credentials, now);
    expect(await signer.headers('a.tar.gz', 'application/json', body, credentials, now + 876)).toBe(first);
  });

  it('signs again for another second, TargetModel, content type, body or credentials', async () => {
    const signer = new InvokeSigner(url, 'us-east-1');
    const first = await signer.headers('a.tar.gz', 'application/json', body, credentials, now);
    const others = [
      await signer.headers('a.tar.gz', 'application/json', body, credentials, now + 1000),
      await signer.headers('b.tar.gz', 'application/json', body, credentials, now + 1000),
      await signer.headers('a.tar.gz', 'application/octet-stream', body, credentials, now + 1000),
      await signer.headers('a.tar.gz', 'application/json', Buffer.from('{}'), credentials, now + 1000),
      await signer.headers('a.tar.gz', 'application/json', body, { ...credentials, secretAccessKey: 'other' }, now + 1000),
    ];
    expect(headerMap(others[0]!)['x-amz-date']).toBe('20261201T143006Z');
    expect(headerMap(others[3]!)['x-amz-content-sha256']).toBe(createHash('sha256').update('{}').digest('hex'));
    expect(headerMap(others[3]!)['content-length']).toBe('2');
    const signatures = new Set([first, ...others].map(authorization));
    expect(signatures.size).toBe(6);
  });
});

describe('InvokeConnection', () => {
  let server: Server;
  let url: URL;
  const held: IncomingMessage[] = [];

  beforeAll(async () => {
    // Answers /fast at once; holds every other request unanswered.
    server = createServer((req, res) => {
      req.resume();
      if (req.url === '/fast') req.on('end', () => res.end('ok'));
      else held.push(req);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });

  const headers = (u: URL) => ['host', u.host, 'content-length', '2'];

  it('reads a whole answer and leaves nothing in flight', async () => {
    const fast = new URL('/fast', url);
    const connection = new InvokeConnection(fast, 4, 60_000);
    try {
      const response = await connection.request(headers(fast), Buffer.from('{}'));
      expect(response.status).toBe(200);
      expect(response.body.toString()).toBe('ok');
      expect(connection.inFlight).toBe(0);
    } finally {
      connection.destroy();
    }
  });

  it('gives up on requests past their deadline, each with a TimeoutError', async () => {
    const slow = new URL('/slow', url);
    const connection = new InvokeConnection(slow, 4, 100);
    try {
      const outcomes = await Promise.allSettled([1, 2, 3].map(() => connection.request(headers(slow), Buffer.from('{}'))));
      for (const outcome of outcomes) {
        expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'TimeoutError', message: 'no answer within 100 ms' } });
      }
      expect(connection.inFlight).toBe(0);
    } finally {
      connection.destroy();
    }
  });

  it('ends every request in flight when their signal aborts, and refuses new ones', async () => {
    const slow = new URL('/slow', url);
    const connection = new InvokeConnection(slow, 8, 60_000);
    const abort = new AbortController();
    try {
      const pending = [1, 2, 3, 4].map(() => connection.request(headers(slow), Buffer.from('{}'), abort.signal));
      expect(connection.inFlight).toBe(4);
      abort.abort();
      const outcomes = await Promise.allSettled(pending);
      for (const outcome of outcomes) expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'AbortError' } });
      expect(connection.inFlight).toBe(0);
      await expect(connection.request(headers(slow), Buffer.from('{}'), abort.signal)).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      connection.destroy();
    }
  });
});

describe('serviceError', () => {
  it('reads a ModelError as the SDK raises it', () => {
    const error = serviceError({
      status: 424,
      headers: { 'x-amzn-errortype': 'ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/' },
      body: Buffer.from(JSON.stringify({ Message: 'Received server error (507)', OriginalStatusCode: 507, OriginalMessage: 'oom' })),
    });
    expect(error).toMatchObject({ name: 'ModelError', message: 'Received server error (507)', OriginalStatusCode: 507 });
  });

  it('names an answer without an error type by its status', () => {
    const error = serviceError({ status: 502, headers: {}, body: Buffer.from('<html>bad gateway</html>') });
    expect(error.name).toBe('HTTP 502');
    expect(error.message).toBe('<html>bad gateway</html>');
  });
});
