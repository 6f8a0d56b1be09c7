// InvokeEndpoint as one signed HTTP request on a pooled keep-alive connection, for load tests: the AWS SDK spends
// about 1 ms of CPU per call in its middleware (measured on loopback: 1.3 ms per call with the SDK against 0.2 ms
// with a bare node:http loop), which would make the client, not the endpoint, the bottleneck at 2,000 requests/s
// on two cores. Credentials and region still come from the SDK's chain, resolved once (and again before they expire),
// and the signature is the SDK's own signer's (@smithy/signature-v4).
//
// What a request costs the client, kept low because a load test sends thousands a second (bench/loadtest.js):
// - signing: a SigV4 signature depends on the request and the second it is dated, so one TargetModel's request is
//   signed once a second and its headers reused (the payload hash once per body);
// - headers: one flat array per TargetModel and second, handed to node:http as is (no header object to copy);
// - timers: none per request. One sweep per connection gives up on requests past their deadline, and one abort
//   listener per signal ends every request still in flight.

import { createHash, createHmac, Hash, Hmac } from 'node:crypto';
import { Agent, ClientRequest, IncomingMessage, request as httpRequest, RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { SignatureV4 } from '@smithy/signature-v4';

export interface SigningCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** The SDK's checksum interface over node:crypto: the `sha256` the SDK's own node runtime passes to its signer. */
class NodeSha256 {
  private readonly hash: Hash | Hmac;

  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }

  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

/** One TargetModel's request headers, signed for one second. */
interface SignedHeaders {
  readonly body: Uint8Array;
  readonly second: number;
  readonly credentials: SigningCredentials;
  readonly headers: Promise<readonly string[]>;
}

/**
 * Signs InvokeEndpoint requests to one endpoint URL and keeps each TargetModel's signed headers for the second they
 * are dated in: within that second the same TargetModel, body and credentials give the same signature.
 */
export class InvokeSigner {
  private readonly signer: SignatureV4;
  private readonly signed = new Map<string, SignedHeaders>();
  /** A body is hashed once, however many TargetModels it is sent to. */
  private readonly payloadHashes = new WeakMap<Uint8Array, string>();
  private credentials?: SigningCredentials;
  private readonly host: string;

  constructor(
    private readonly url: URL,
    region: string,
    private readonly variant?: string,
  ) {
    this.host = url.host;
    this.signer = new SignatureV4({
      service: 'sagemaker',
      region,
      credentials: async () => this.credentials!,
      sha256: NodeSha256,
    });
  }

  /**
   * The request's headers as node:http takes them (name, value, name, value, ...), signed with `credentials` and
   * dated `nowMs` (milliseconds since the epoch). Reused, never changed: the caller must not modify them, nor a body
   * once it was signed (its hash is kept by identity).
   */
  headers(targetModel: string, contentType: string, body: Uint8Array, credentials: SigningCredentials, nowMs: number) {
    const second = Math.floor(nowMs / 1000);
    const key = `${contentType}\n${targetModel}`;
    const last = this.signed.get(key);
    if (last && last.second === second && last.body === body && last.credentials === credentials) return last.headers;
    let payloadHash = this.payloadHashes.get(body);
    if (payloadHash === undefined) {
      payloadHash = createHash('sha256').update(body).digest('hex');
      this.payloadHashes.set(body, payloadHash);
    }
    const headers = this.sign(targetModel, contentType, body, payloadHash, credentials, second);
    // A failed signature is not kept: the next request tries again.
    headers.catch(() => this.signed.get(key)?.headers === headers && this.signed.delete(key));
    this.signed.set(key, { body, second, credentials, headers });
    return headers;
  }

  private async sign(targetModel: string, contentType: string, body: Uint8Array, payloadHash: string,
    credentials: SigningCredentials, second: number): Promise<readonly string[]> {
    const unsigned: Record<string, string> = {
      host: this.host,
      'content-type': contentType,
      accept: '*/*',
      'x-amzn-sagemaker-target-model': targetModel,
      ...(this.variant ? { 'x-amzn-sagemaker-target-variant': this.variant } : {}),
      'x-amz-content-sha256': payloadHash,
    };
    this.credentials = credentials;
    const signed = await this.signer.sign(
      {
        method: 'POST',
        protocol: this.url.protocol,
        hostname: this.url.hostname,
        ...(this.url.port ? { port: Number(this.url.port) } : {}),
        path: this.url.pathname,
        query: {},
        headers: unsigned,
        body,
      },
      { signingDate: new Date(second * 1000) },
    );
    const flat: string[] = [];
    for (const [name, value] of Object.entries(signed.headers)) flat.push(name, value);
    flat.push('content-length', String(body.length));
    return flat;
  }
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

const abortError = () => Object.assign(new Error('aborted'), { name: 'AbortError' });

/**
 * A keep-alive pool to one origin and the requests in flight on it, each with its deadline. One sweep a while gives
 * up on those past it (their deadline is kept to within a tenth of the timeout, at most a second late); a request
 * is in the map in the order it was sent, and all share one timeout, so the sweep stops at the first not yet due.
 */
export class InvokeConnection {
  private readonly agent: Agent;
  private readonly send: typeof httpRequest;
  private readonly deadlines = new Map<ClientRequest, number>();
  private readonly bySignal = new WeakMap<AbortSignal, Set<ClientRequest>>();
  private sweeper?: ReturnType<typeof setInterval>;
  private readonly base: RequestOptions;

  constructor(
    url: URL,
    maxSockets: number,
    private readonly timeoutMs: number,
  ) {
    const options = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' as const };
    const https = url.protocol === 'https:';
    this.agent = https ? new HttpsAgent(options) : new Agent(options);
    this.send = https ? httpsRequest : httpRequest;
    this.base = { method: 'POST', hostname: url.hostname, port: url.port || (https ? 443 : 80), path: url.pathname + url.search };
  }

  /** Sends `body` with `headers` (as InvokeSigner gives them) and reads the whole answer. */
  request(headers: readonly string[], body: Uint8Array, signal?: AbortSignal): Promise<RawResponse> {
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise((resolve, reject) => {
      const req = this.send({ ...this.base, agent: this.agent, headers: headers as string[] }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          this.settled(req, signal);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        });
      });
      req.on('error', (err) => {
        this.settled(req, signal);
        reject(err);
      });
      this.deadlines.set(req, performance.now() + this.timeoutMs);
      this.sweeper ??= this.startSweeping();
      if (signal) this.track(signal, req);
      req.end(body);
    });
  }

  /** Ends every request still in flight and closes the pool's sockets. */
  destroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const req of this.deadlines.keys()) req.destroy(abortError());
    this.deadlines.clear();
    this.agent.destroy();
  }

  /** Requests in flight (for tests). */
  get inFlight(): number {
    return this.deadlines.size;
  }

  private settled(req: ClientRequest, signal: AbortSignal | undefined): void {
    this.deadlines.delete(req);
    if (signal) this.bySignal.get(signal)?.delete(req);
  }

  private startSweeping(): ReturnType<typeof setInterval> {
    const every = Math.max(5, Math.min(1000, this.timeoutMs / 10));
    const timer = setInterval(() => {
      const now = performance.now();
      for (const [req, deadline] of this.deadlines) {
        if (deadline > now) break;
        this.deadlines.delete(req);
        req.destroy(Object.assign(new Error(`no answer within ${this.timeoutMs} ms`), { name: 'TimeoutError' }));
      }
      if (this.deadlines.size === 0) {
        clearInterval(timer);
        this.sweeper = undefined;
      }
    }, every);
    timer.unref();
    return timer;
  }

  /**
   * A load test shares one signal among thousands of requests; node:http's own `signal` option adds and removes one
   * listener per request on it, which costs time in the number of listeners, so one listener per signal here ends
   * every request still in its set.
   */
  private track(signal: AbortSignal, req: ClientRequest): void {
    let set = this.bySignal.get(signal);
    if (!set) {
      const requests = new Set<ClientRequest>();
      set = requests;
      this.bySignal.set(signal, requests);
      signal.addEventListener('abort', () => {
        for (const r of requests) r.destroy(abortError());
        requests.clear();
      }, { once: true });
    }
    set.add(req);
  }
}
