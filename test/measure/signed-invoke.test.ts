// The load-test client signs InvokeEndpoint itself (lib/measure/signed-invoke.ts): its Authorization header must be
// the one the AWS SDK's own signer (@smithy/signature-v4, which the SDK clients use) computes for the same request.

import { createHash, createHmac, Hash, Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { SigV4Signer } from '../../lib/measure/signed-invoke';
import { serviceError } from '../../lib/measure/invoker';

/** The SDK's Checksum interface over node:crypto (what its node runtime passes as `sha256`). */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret ? createHmac('sha256', bytes(secret)) : createHash('sha256');
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const now = new Date('2026-12-01T14:30:05.123Z');

async function sdkAuthorization(url: URL, headers: Record<string, string>, body: Uint8Array, sessionToken?: string): Promise<string> {
  const signer = new SignatureV4({
    credentials: { ...credentials, ...(sessionToken ? { sessionToken } : {}) },
    region: 'eu-west-1',
    service: 'sagemaker',
    sha256: Sha256,
  });
  // Ours always sends the payload hash header, so both sign it.
  const request = {
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: {},
    headers: { ...headers, host: url.host, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') },
    body,
  };
  const signed = await signer.sign(request, { signingDate: now });
  return signed.headers['authorization']!;
}

describe('SigV4Signer', () => {
  it.each([
    ['https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/my-mme/invocations', undefined],
    ['http://127.0.0.1:4566/endpoints/mme-2/invocations', 'FwoGZXIvYXdzEXAMPLETOKEN'],
  ])('signs %s as the SDK does', async (href, sessionToken) => {
    const url = new URL(href);
    const body = Buffer.from('{"inputs":[{"name":"X","datatype":"FP32","shape":[1],"data":[1]}]}');
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-amzn-sagemaker-target-model': 'model  with spaces.tar.gz',
    };
    const ours = { ...headers };
    new SigV4Signer('eu-west-1', 'sagemaker').sign({ method: 'POST', url, headers: ours, body }, { ...credentials,
      ...(sessionToken ? { sessionToken } : {}) }, now);
    const expected = await sdkAuthorization(url, { ...headers, 'x-amz-date': '20261201T143005Z',
      ...(sessionToken ? { 'x-amz-security-token': sessionToken } : {}) }, body, sessionToken);
    expect(ours['authorization']).toBe(expected);
    expect(ours['x-amz-date']).toBe('20261201T143005Z');
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
