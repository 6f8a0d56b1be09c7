import { statSync, utimesSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { versionedKeyPattern } from '../../lib/bundle/target-model-name';
import { handler, onEvent, summary } from '../../constructs/handlers/archive-retention/index.js';
import { LocalS3, startLocalS3 } from '../aws/s3rver-harness';
import { loadScaled } from '../load-scale';

type RetentionEvent = Parameters<typeof onEvent>[0];

const T0 = new Date('2026-11-01T12:00:00Z');
const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const at = (days: number) => new Date(T0.getTime() + days * DAY);
const version = (digit: string) => `prod/resnet-${digit.repeat(12)}.tar.gz`;
const HISTORY = '.mme-deploy/archive-history/prod/SArchive1234.json';
const ARCHIVE = { Prefix: 'prod/resnet-', Pattern: versionedKeyPattern('prod/', 'resnet') };
/** Keys the construct never deployed: a hand push, a neighbour whose name starts alike, unversioned, another prefix. */
const NEIGHBOURS = [
  version('e'),
  `prod/resnet-extra-${'6'.repeat(12)}.tar.gz`,
  'prod/resnet.tar.gz',
  `other/resnet-${'7'.repeat(12)}.tar.gz`,
];

/** A deployment whose archive `live` follows `previous` (an Update), or the first one (a Create). */
function deploy(live: string, previous: string | undefined, keep: { versions?: number; seconds?: number } = {}): RetentionEvent {
  const props = {
    Bucket: 'models',
    HistoryKey: HISTORY,
    Archives: [{ ...ARCHIVE, Live: live }],
    // CloudFormation hands numbers over as strings.
    KeepVersions: String(keep.versions ?? 0),
    KeepForSeconds: String(keep.seconds ?? 0),
  };
  if (previous === undefined) return { RequestType: 'Create', ResourceProperties: props };
  const old = { ...props, Archives: [{ ...ARCHIVE, Live: previous }] };
  return { RequestType: 'Update', ResourceProperties: props, OldResourceProperties: old };
}

describe('the ModelArchive retention handler against a real S3 server (s3rver)', () => {
  let s3: LocalS3;

  beforeEach(async () => {
    s3 = await startLocalS3(['models']);
  });
  afterEach(() => s3.close());

  async function put(key: string, when: Date): Promise<void> {
    await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: key, Body: key }));
    // s3rver reports a file's mtime as LastModified. It answers the PUT once the body has gone through its hash, before
    // its write stream has opened the file, let alone written it (jamhall/s3rver:lib/stores/filesystem.js:287-311,
    // 3.7.1): under load the file is not there yet. Its mtime is set once all of the body is in it.
    const file = join(s3.directory, 'models', `${key}._S3rver_object`);
    for (const deadline = Date.now() + loadScaled(10_000); statSync(file, { throwIfNoEntry: false })?.size !== key.length;) {
      if (Date.now() > deadline) throw new Error(`s3rver never wrote ${file}`);
      await sleep(5);
    }
    utimesSync(file, when, when);
  }
  async function keys(): Promise<string[]> {
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'models' }));
    return (listed.Contents ?? []).map((o) => o.Key!).sort();
  }
  async function history(): Promise<Record<string, Array<{ key: string; deployed: string }>>> {
    const out = await s3.client.send(new GetObjectCommand({ Bucket: 'models', Key: HISTORY }));
    return (JSON.parse(await out.Body!.transformToString()) as { archives: Record<string, Array<{ key: string; deployed: string }>> })
      .archives;
  }
  /** Deploys versions 1, 2, 3, 4 of resnet on days 0, 1, 2, 3, keeping everything. */
  async function deployFour(): Promise<void> {
    for (const [i, digit] of ['1', '2', '3', '4'].entries()) {
      await put(version(digit), at(i));
      await onEvent(deploy(version(digit), i === 0 ? undefined : version(String(i)), { versions: 10 }), s3.client, at(i));
    }
    for (const key of NEIGHBOURS) await put(key, at(4));
  }

  it('records each deploy in its history and deletes nothing on the first one', async () => {
    await put(version('1'), at(0));
    const result = await onEvent(deploy(version('1'), undefined), s3.client, at(0));
    expect(result).toEqual({ deleted: [], notDeleted: [], problems: [] });
    // The archive's upload above; then the handler reads the (missing) history and writes it.
    expect(s3.commands).toEqual(['PutObjectCommand', 'GetObjectCommand', 'PutObjectCommand']);
    expect(await history()).toEqual({ 'prod/resnet-': [{ key: version('1'), deployed: at(0).toISOString() }] });
  });

  it('keeps the newest N previous versions by deploy order, the live one, and never a key it did not deploy', async () => {
    await deployFour();
    const result = await onEvent(deploy(version('4'), version('4'), { versions: 1 }), s3.client, at(5));
    expect(result).toEqual({ deleted: [version('2'), version('1')], notDeleted: [], problems: [] });
    expect(await keys()).toEqual([version('3'), version('4'), ...NEIGHBOURS, HISTORY].sort());
    expect((await history())['prod/resnet-']!.map((d) => d.key)).toEqual([version('3'), version('4')]);
  });

  it('ranks by deploy history, not LastModified: a writer refreshing an old archive does not get newer ones deleted', async () => {
    await deployFour();
    // Someone who may write to the bucket uploads version 1 again: S3 now calls it the newest object of all.
    await put(version('1'), at(6));
    const result = await onEvent(deploy(version('4'), version('4'), { versions: 1 }), s3.client, at(7));
    // Version 3 (deployed just before the live one) stays; 1 and 2, replaced long ago, go, whatever their dates.
    expect(result.deleted).toEqual([version('2'), version('1')]);
    expect(await keys()).toEqual([version('3'), version('4'), ...NEIGHBOURS, HISTORY].sort());
  });

  it('keeps previous versions for a time after the next deploy replaced them', async () => {
    await deployFour();
    // At day 3.5: version 3 was replaced 12 h ago, version 2 1.5 days ago, version 1 2.5 days ago.
    const result = await onEvent(deploy(version('4'), version('4'), { seconds: 2 * 24 * 3600 }), s3.client, at(3.5));
    expect(result.deleted).toEqual([version('1')]);
  });

  it('on a rollback to an earlier version, makes it live again and ranks the rolled-back one as just replaced', async () => {
    await deployFour();
    // The update to 4 failed; CloudFormation rolls back to 3 (an Update with the old properties).
    const result = await onEvent(deploy(version('3'), version('4'), { versions: 1 }), s3.client, at(3.1));
    expect(result.deleted).toEqual([version('2'), version('1')]);
    expect((await history())['prod/resnet-']!.map((d) => d.key)).toEqual([version('4'), version('3')]);
    expect(await keys()).toContain(version('3'));
  });

  it('deletes only keys of its own archive pattern, even when the history was edited to name others', async () => {
    await deployFour();
    const forged = [...NEIGHBOURS, 'prod/secret.txt', version('1')].map((key) => ({ key, deployed: at(0).toISOString() }));
    await s3.client.send(
      new PutObjectCommand({ Bucket: 'models', Key: HISTORY, Body: JSON.stringify({ format: 1, archives: { 'prod/resnet-': forged } }) }),
    );
    await put('prod/secret.txt', at(0));
    const result = await onEvent(deploy(version('4'), version('4'), { versions: 0 }), s3.client, at(5));
    // Version e matches the archive's pattern (an edit can name it); nothing else named goes.
    expect(result.deleted).toEqual([version('1'), version('e')]);
    expect(await keys()).toEqual([...NEIGHBOURS.slice(1), 'prod/secret.txt', version('2'), version('3'), version('4'), HISTORY].sort());
  });

  it('a stack from before the history: learns the previous live version from the old properties', async () => {
    await put(version('1'), at(0));
    await put(version('2'), at(1));
    await put(version('3'), at(2));
    const result = await onEvent(deploy(version('3'), version('2'), { versions: 0 }), s3.client, at(2));
    // Version 2 was live before; version 1, of which nothing is known, stays.
    expect(result.deleted).toEqual([version('2')]);
    expect(await keys()).toEqual([version('1'), version('3'), HISTORY].sort());
  });

  it('starts a new history when the object is not one, says so, and deletes nothing it cannot rank', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: HISTORY, Body: 'not json' }));
    await put(version('1'), at(0));
    await put(version('2'), at(1));
    const result = await onEvent(deploy(version('2'), undefined), s3.client, at(1));
    expect(result.deleted).toEqual([]);
    expect(result.problems).toEqual([
      `s3://models/${HISTORY} is not a deploy history of mme-deploy; a new one starts, and versions it listed are no longer ` +
        'deleted (delete them by hand if you want them gone).',
    ]);
    expect(await history()).toEqual({ 'prod/resnet-': [{ key: version('2'), deployed: at(1).toISOString() }] });
  });

  it('does nothing when the resource is deleted (the stack or the archive removed)', async () => {
    await deployFour();
    s3.commands.length = 0;
    const event: RetentionEvent = { ...deploy(version('4'), undefined), RequestType: 'Delete' };
    expect(await onEvent(event, s3.client, at(9))).toEqual({ deleted: [], notDeleted: [], problems: [] });
    expect(s3.commands).toEqual([]);
  });
});

describe('the ModelArchive retention handler when S3 refuses', () => {
  const history = {
    format: 1,
    archives: { 'prod/resnet-': ['1', '2', '3', '4'].map((d, i) => ({ key: version(d), deployed: at(i).toISOString() })) },
  };
  const event = deploy(version('4'), version('4'));
  // Mocked only in this block: the tests above talk to s3rver through the real client.
  let s3: ReturnType<typeof mockClient>;
  beforeEach(() => {
    s3 = mockClient(S3Client);
    s3.on(GetObjectCommand).resolves({ Body: { transformToString: async () => JSON.stringify(history) } as never });
  });
  afterEach(() => s3.restore());
  const writtenHistory = () =>
    (JSON.parse(String(s3.commandCalls(PutObjectCommand)[0]!.args[0].input.Body)) as typeof history).archives['prod/resnet-'].map(
      (d) => d.key,
    );

  it('reports the keys a 200 DeleteObjects answer lists in Errors and keeps them in the history for the next deploy', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Deleted: [{ Key: version('3') }],
      Errors: [
        { Key: version('1'), Code: 'AccessDenied', Message: 'Access Denied' },
        { Key: version('2'), Code: 'InternalError', Message: 'We encountered an internal error. Please try again.' },
      ],
    });
    const lines: string[] = [];
    const result = await onEvent(event, new S3Client({}), at(5), (line) => lines.push(line));
    // The exact request: the three previous versions, most recently replaced first, quietly.
    expect(s3.commandCalls(DeleteObjectsCommand).map((c) => c.args[0].input)).toEqual([
      { Bucket: 'models', Delete: { Objects: ['3', '2', '1'].map((d) => ({ Key: version(d) })), Quiet: true } },
    ]);
    expect(result.deleted).toEqual([version('3')]);
    expect(result.notDeleted).toEqual([version('1'), version('2')]);
    expect(result.problems).toEqual([
      `Could not delete s3://models/${version('1')}: AccessDenied Access Denied. It stays; the next deployment tries again.`,
      `Could not delete s3://models/${version('2')}: InternalError We encountered an internal error. Please try again.. ` +
        'It stays; the next deployment tries again.',
    ]);
    expect(lines).toEqual([...result.problems, `Deleted s3://models/${version('3')} (an older version the retention no longer keeps).`]);
    expect(writtenHistory()).toEqual([version('1'), version('2'), version('4')]);
  });

  it('reports a refused DeleteObjects call (AccessDenied) instead of failing the deployment', async () => {
    s3.on(DeleteObjectsCommand).rejects(Object.assign(new Error('Access Denied'), { name: 'AccessDenied' }));
    const result = await onEvent(event, new S3Client({}), at(5));
    expect(result).toEqual({
      deleted: [],
      notDeleted: [version('3'), version('2'), version('1')],
      problems: ['Could not delete 3 old archive(s) from s3://models: Access Denied. They stay; the next deployment tries again.'],
    });
    expect(writtenHistory()).toEqual([version('1'), version('2'), version('3'), version('4')]);
  });

  it('deletes nothing and keeps the history when it cannot read it (AccessDenied), and reports it', async () => {
    const refused = Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    s3.on(GetObjectCommand).rejects(refused);
    const result = await onEvent(event, new S3Client({}), at(5));
    expect(result.problems).toEqual([
      `Could not read the deploy history s3://models/${HISTORY}: Access Denied. Nothing was deleted; the next deployment tries again.`,
    ]);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(0);
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(0);
  });

  it('reports a history it could not write, after deleting what it had ranked', async () => {
    s3.on(DeleteObjectsCommand).resolves({});
    s3.on(PutObjectCommand).rejects(new Error('Service Unavailable'));
    const result = await onEvent(event, new S3Client({}), at(5));
    expect(result.deleted).toEqual([version('3'), version('2'), version('1')]);
    expect(result.problems).toEqual([`Could not write the deploy history s3://models/${HISTORY}: Service Unavailable.`]);
  });
});

describe('the ModelArchive retention handler: its requests and its reading of the history, exactly (mocked S3)', () => {
  let s3: ReturnType<typeof mockClient>;
  const stored = (body: unknown) => ({ Body: { transformToString: async () => (typeof body === 'string' ? body : JSON.stringify(body)) } });
  const entry = (digit: string, day: number) => ({ key: version(digit), deployed: at(day).toISOString() });
  beforeEach(() => {
    s3 = mockClient(S3Client);
    s3.on(DeleteObjectsCommand).resolves({});
    s3.on(PutObjectCommand).resolves({});
  });
  afterEach(() => s3.restore());
  const deleted = () => s3.commandCalls(DeleteObjectsCommand).map((c) => c.args[0].input.Delete!.Objects!.map((o) => o.Key));
  const written = () => s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
  const writtenArchives = () => (JSON.parse(String(written()[0]!.Body)) as { archives: Record<string, unknown> }).archives;

  it('takes a 404 of any name, or NoSuchKey without a status, for no history yet, and writes the first one exactly', async () => {
    for (const missing of [
      Object.assign(new Error('gone'), { name: 'Whatever', $metadata: { httpStatusCode: 404 } }),
      Object.assign(new Error('gone'), { name: 'NoSuchKey' }),
    ]) {
      s3.on(GetObjectCommand).rejects(missing);
      s3.resetHistory();
      const result = await onEvent(deploy(version('1'), undefined), new S3Client({}), at(0));
      expect(result).toEqual({ deleted: [], notDeleted: [], problems: [] });
      expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input)).toEqual([{ Bucket: 'models', Key: HISTORY }]);
      expect(written()).toEqual([
        {
          Bucket: 'models',
          Key: HISTORY,
          Body: `${JSON.stringify({ format: 1, archives: { 'prod/resnet-': [entry('1', 0)] } }, null, 1)}\n`,
          ContentType: 'application/json',
        },
      ]);
    }
    // A rejection that is no Error object is reported as its text.
    s3.on(GetObjectCommand).callsFake(() => Promise.reject('a plain string'));
    expect((await onEvent(deploy(version('1'), undefined), new S3Client({}), at(0))).problems).toEqual([
      `Could not read the deploy history s3://models/${HISTORY}: a plain string. Nothing was deleted; the next deployment tries again.`,
    ]);
  });

  it('starts a new history, saying so, from anything that is not one of its histories', async () => {
    const notOne =
      `s3://models/${HISTORY} is not a deploy history of mme-deploy; a new one starts, and versions it listed are no longer ` +
      'deleted (delete them by hand if you want them gone).';
    const texts = ['null', '""', '[]', '{"format":2,"archives":{}}', '{"format":1}', '{"format":1,"archives":[]}'];
    texts.push('{"format":1,"archives":"x"}');
    for (const text of texts) {
      s3.on(GetObjectCommand).resolves(stored(text) as never);
      s3.resetHistory();
      const result = await onEvent(deploy(version('2'), undefined), new S3Client({}), at(1));
      expect({ text, problems: result.problems }).toEqual({ text, problems: [notOne] });
      expect(writtenArchives()).toEqual({ 'prod/resnet-': [entry('2', 1)] });
    }
    // No body at all.
    s3.on(GetObjectCommand).resolves({});
    expect((await onEvent(deploy(version('2'), undefined), new S3Client({}), at(1))).problems).toEqual([notOne]);
  });

  it('keeps only list-valued archives and well-formed entries of the archive\'s own pattern', async () => {
    const entries = [null, { key: 7, deployed: 'x' }, { key: version('a'), deployed: 7 }, entry('b', 0)];
    entries.push({ key: 'prod/x.tar.gz', deployed: 'y' });
    const archives = { 'prod/resnet-': entries, 'prod/gone-': 'not a list', 'x/': [1] };
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives }) as never);
    const result = await onEvent(deploy(version('c'), undefined), new S3Client({}), at(1));
    expect(result).toEqual({ deleted: [version('b')], notDeleted: [], problems: [] });
    expect(deleted()).toEqual([[version('b')]]);
    expect(writtenArchives()).toEqual({ 'prod/resnet-': [entry('c', 1)], 'x/': [1] });
  });

  it('a redeploy of the live version keeps its first deploy time; the previous live version joins once, if it is one', async () => {
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives: { 'prod/resnet-': [entry('1', 0), entry('2', 1)] } }) as never);
    await onEvent(deploy(version('2'), version('2'), { versions: 5 }), new S3Client({}), at(9));
    expect(writtenArchives()).toEqual({ 'prod/resnet-': [entry('1', 0), entry('2', 1)] });
    // Previous live one unknown to the history: it joins, deploy time unknown ('').
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives: {} }) as never);
    s3.resetHistory();
    await onEvent(deploy(version('2'), version('1'), { versions: 5 }), new S3Client({}), at(9));
    expect(writtenArchives()).toEqual({ 'prod/resnet-': [{ key: version('1'), deployed: '' }, entry('2', 9)] });
    // Not when it is no version of this archive, nor when it is the live one.
    for (const previous of ['prod/other-111111111111.tar.gz', version('2')]) {
      s3.resetHistory();
      await onEvent(deploy(version('2'), previous, { versions: 5 }), new S3Client({}), at(9));
      expect(writtenArchives()).toEqual({ 'prod/resnet-': [entry('2', 9)] });
    }
    // Nor when the history lists it already: it keeps its place and time.
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives: { 'prod/resnet-': [entry('1', 0)] } }) as never);
    s3.resetHistory();
    await onEvent(deploy(version('2'), version('1'), { versions: 5 }), new S3Client({}), at(9));
    expect(writtenArchives()).toEqual({ 'prod/resnet-': [entry('1', 0), entry('2', 9)] });
  });

  it('deletes a version replaced exactly KeepForSeconds ago, not one replaced a millisecond later; keeps KeepVersions', async () => {
    const three = [entry('1', 0), entry('2', 1), entry('3', 2)];
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives: { 'prod/resnet-': three } }) as never);
    const live3 = deploy(version('3'), version('3'), { seconds: DAY / 1000 });
    expect((await onEvent(live3, new S3Client({}), at(2))).deleted).toEqual([version('1')]);
    s3.resetHistory();
    expect((await onEvent(live3, new S3Client({}), new Date(at(3).getTime() - 1))).deleted).toEqual([version('1')]);
    s3.resetHistory();
    expect((await onEvent(live3, new S3Client({}), at(3))).deleted).toEqual([version('2'), version('1')]);
    s3.resetHistory();
    expect((await onEvent(deploy(version('3'), version('3'), { versions: 1 }), new S3Client({}), at(2))).deleted).toEqual([version('1')]);
    s3.resetHistory();
    // No KeepVersions nor KeepForSeconds given: none kept.
    const bare = deploy(version('3'), version('3'));
    const props = { ...bare.ResourceProperties, KeepVersions: undefined, KeepForSeconds: undefined };
    expect((await onEvent({ ...bare, ResourceProperties: props }, new S3Client({}), at(2))).deleted).toEqual([version('2'), version('1')]);
  });

  it('counts an unreadable deploy time as long ago', async () => {
    const unreadable = { key: version('2'), deployed: 'yesterday' };
    const history = { format: 1, archives: { 'prod/resnet-': [entry('1', 0), unreadable, entry('3', 2)] } };
    s3.on(GetObjectCommand).resolves(stored(history) as never);
    const result = await onEvent(deploy(version('3'), version('3'), { seconds: 100 * DAY / 1000 }), new S3Client({}), at(2));
    // Version 1 was replaced when version 2 went live, at an unknown time: long ago. Version 2 was replaced just now.
    expect(result.deleted).toEqual([version('1')]);
  });

  it('deletes in batches of 1,000 keys (DeleteObjects\' limit)', async () => {
    // Distinct versions: 12 hex digits from the index.
    const many = Array.from({ length: 2501 }, (_, i) => ({ key: `prod/resnet-${i.toString(16).padStart(12, '0')}.tar.gz`, deployed: '' }));
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives: { 'prod/resnet-': many } }) as never);
    const live = many.at(-1)!.key;
    const result = await onEvent(deploy(live, live), new S3Client({}), at(1));
    expect(deleted().map((batch) => batch.length)).toEqual([1000, 1000, 500]);
    expect(deleted()[0]![0]).toBe(many.at(-2)!.key);
    expect(deleted()[2]!.at(-1)).toBe(many[0]!.key);
    expect(result.deleted).toHaveLength(2500);
    expect(writtenArchives()).toEqual({ 'prod/resnet-': [{ key: live, deployed: '' }] });
  });

  it('reports an Errors entry without a key, and a rejection that is no Error', async () => {
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives: { 'prod/resnet-': [entry('1', 0), entry('2', 1)] } }) as never);
    s3.on(DeleteObjectsCommand).resolves({ Errors: [{ Code: 'InternalError', Message: 'Try again' }] });
    const result = await onEvent(deploy(version('2'), version('2')), new S3Client({}), at(5));
    expect(result).toEqual({
      deleted: [version('1')],
      notDeleted: [''],
      problems: ['Could not delete s3://models/undefined: InternalError Try again. It stays; the next deployment tries again.'],
    });
    s3.on(DeleteObjectsCommand).callsFake(() => Promise.reject('refused'));
    expect((await onEvent(deploy(version('2'), version('2')), new S3Client({}), at(5))).problems).toEqual([
      'Could not delete 1 old archive(s) from s3://models: refused. They stay; the next deployment tries again.',
    ]);
  });

  it('is the Lambda handler: counts and problems as the strings a custom resource answers, logged to the function log', async () => {
    s3.on(GetObjectCommand).resolves(stored({ format: 1, archives: { 'prod/resnet-': [entry('1', 0), entry('2', 1)] } }) as never);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await handler(deploy(version('2'), version('2')))).toEqual({ Data: { Deleted: '1', NotDeleted: '0', Problems: 'none' } });
      expect(log.mock.calls).toEqual([[`Deleted s3://models/${version('1')} (an older version the retention no longer keeps).`]]);
      s3.on(DeleteObjectsCommand).rejects(new Error('Access Denied'));
      expect(await handler(deploy(version('2'), version('2')))).toEqual({
        Data: {
          Deleted: '0',
          NotDeleted: '1',
          Problems: 'Could not delete 1 old archive(s) from s3://models: Access Denied. They stay; the next deployment tries again.',
        },
      });
    } finally {
      log.mockRestore();
    }
  });
});

describe('the ModelArchive retention report', () => {
  it('fits the custom resource response (4,096 bytes in all) however many deletions failed', () => {
    expect(summary([])).toBe('none');
    expect(summary(['one problem.'])).toBe('one problem.');
    const many = Array.from({ length: 200 }, (_, i) => `Could not delete s3://models/${version(String(i % 10))}: AccessDenied.`);
    const text = summary(many);
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text).toBe(`${many.join(' ').slice(0, 900)}... (200 problems in all; the function's log lists each)`);
    expect(summary(['a', 'b'])).toBe('a b');
    // 1,000 characters fit as they are; one more is cut.
    expect(summary(['x'.repeat(1000)])).toBe('x'.repeat(1000));
    expect(summary(['x'.repeat(1001)])).toBe(`${'x'.repeat(900)}... (1 problems in all; the function's log lists each)`);
  });
});
