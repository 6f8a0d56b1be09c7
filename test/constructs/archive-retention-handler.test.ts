import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { versionedKeyPattern } from '../../lib/bundle/target-model-name';
import { onEvent } from '../../constructs/handlers/archive-retention/index.js';
import { LocalS3, startLocalS3 } from '../aws/s3rver-harness';

const NOW = new Date('2026-11-30T12:00:00Z');
const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const hash = (digit: string) => digit.repeat(12);

/** resnet's versions under prod/, oldest first, with how long before NOW each was written, and unrelated neighbours. */
const OBJECTS: Array<[key: string, age: number]> = [
  [`prod/resnet-${hash('1')}.tar.gz`, 10 * DAY],
  [`prod/resnet-${hash('2')}.tar.gz`, 5 * DAY],
  [`prod/resnet-${hash('3')}.tar.gz`, 2 * DAY],
  [`prod/resnet-${hash('4')}.tar.gz`, 1 * HOUR], // live: just deployed
  [`prod/resnet-${hash('5')}.tar.gz`, 0.1 * HOUR], // pushed by hand after the deployment
  [`prod/resnet-extra-${hash('6')}.tar.gz`, 20 * DAY], // another archive whose name starts with resnet-
  [`prod/resnet.tar.gz`, 20 * DAY], // an unversioned archive
  [`other/resnet-${hash('7')}.tar.gz`, 20 * DAY], // outside the prefix
];
const LIVE = `prod/resnet-${hash('4')}.tar.gz`;

describe('the ModelArchive retention handler against a real S3 server (s3rver)', () => {
  let s3: LocalS3;

  beforeEach(async () => {
    s3 = await startLocalS3(['models']);
    for (const [key, age] of OBJECTS) {
      await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: key, Body: key }));
      // s3rver reports a file's mtime as LastModified.
      const when = new Date(NOW.getTime() - age);
      utimesSync(join(s3.directory, 'models', `${key}._S3rver_object`), when, when);
    }
    s3.commands.length = 0;
  });
  afterEach(() => s3.close());

  const event = (retention: { KeepVersions: number; KeepForSeconds: number }, live = LIVE): Parameters<typeof onEvent>[0] => ({
    RequestType: 'Update',
    ResourceProperties: {
      Bucket: 'models',
      Archives: [{ Prefix: 'prod/resnet-', Pattern: versionedKeyPattern('prod/', 'resnet'), Live: live }],
      // CloudFormation hands numbers over as strings.
      KeepVersions: String(retention.KeepVersions),
      KeepForSeconds: String(retention.KeepForSeconds),
    },
  });

  async function remainingKeys(): Promise<string[]> {
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'models' }));
    return (listed.Contents ?? []).map((o) => o.Key!).sort();
  }

  it('keeps the newest N previous versions, the live one and newer ones, and touches no other key', async () => {
    const result = await onEvent(event({ KeepVersions: 1, KeepForSeconds: 0 }), s3.client, NOW);
    expect(s3.commands).toEqual(['ListObjectsV2Command', 'DeleteObjectsCommand']);
    expect(result.deleted).toEqual([`prod/resnet-${hash('2')}.tar.gz`, `prod/resnet-${hash('1')}.tar.gz`]);
    expect(await remainingKeys()).toEqual(
      OBJECTS.map(([key]) => key)
        .filter((key) => !result.deleted.includes(key))
        .sort(),
    );
  });

  it('keeps previous versions for a time after a newer one replaced them', async () => {
    // resnet-3 was replaced 1 h ago (by the live one), resnet-2 2 days ago, resnet-1 5 days ago.
    const result = await onEvent(event({ KeepVersions: 0, KeepForSeconds: 3 * 24 * 3600 }), s3.client, NOW);
    expect(result.deleted).toEqual([`prod/resnet-${hash('1')}.tar.gz`]);
  });

  it('keeps only the live version with versions(0)', async () => {
    const result = await onEvent(event({ KeepVersions: 0, KeepForSeconds: 0 }), s3.client, NOW);
    expect(result.deleted.sort()).toEqual([1, 2, 3].map((d) => `prod/resnet-${hash(String(d))}.tar.gz`));
    expect(await remainingKeys()).toContain(LIVE);
    expect(await remainingKeys()).toContain(`prod/resnet-${hash('5')}.tar.gz`);
  });

  it('deletes nothing when the live version is missing, or when the resource is deleted', async () => {
    expect(
      (await onEvent(event({ KeepVersions: 0, KeepForSeconds: 0 }, `prod/resnet-${hash('9')}.tar.gz`), s3.client, NOW)).deleted,
    ).toEqual([]);
    expect((await onEvent({ ...event({ KeepVersions: 0, KeepForSeconds: 0 }), RequestType: 'Delete' }, s3.client, NOW)).deleted).toEqual(
      [],
    );
    expect(s3.commands).toEqual(['ListObjectsV2Command']); // the update listed; the delete did nothing
    expect(await remainingKeys()).toHaveLength(OBJECTS.length);
  });
});

describe('the ModelArchive retention handler when S3 refuses deletions', () => {
  const versions = [1, 2, 3, 4].map((d, i) => ({
    Key: `prod/resnet-${hash(String(d))}.tar.gz`,
    LastModified: new Date(NOW.getTime() - (4 - i) * DAY),
  }));
  const live = versions[3]!.Key;
  const event: Parameters<typeof onEvent>[0] = {
    RequestType: 'Update',
    ResourceProperties: {
      Bucket: 'models',
      Archives: [{ Prefix: 'prod/resnet-', Pattern: versionedKeyPattern('prod/', 'resnet'), Live: live }],
      KeepVersions: '0',
      KeepForSeconds: '0',
    },
  };
  // Mocked only in this block: the tests above talk to s3rver through the real client.
  let s3: ReturnType<typeof mockClient>;
  beforeEach(() => {
    s3 = mockClient(S3Client);
  });
  afterEach(() => s3.restore());

  it('reports the keys a 200 DeleteObjects answer lists in Errors, counts only the others as deleted, and does not fail', async () => {
    s3.on(ListObjectsV2Command).resolves({ Contents: versions, IsTruncated: false });
    s3.on(DeleteObjectsCommand).resolves({
      Deleted: [{ Key: versions[2]!.Key }],
      Errors: [
        { Key: versions[0]!.Key, Code: 'AccessDenied', Message: 'Access Denied' },
        { Key: versions[1]!.Key, Code: 'InternalError', Message: 'We encountered an internal error. Please try again.' },
      ],
    });
    const lines: string[] = [];
    const result = await onEvent(event, new S3Client({}), NOW, (line) => lines.push(line));
    // The exact request: the three previous versions, newest first, quietly.
    expect(s3.commandCalls(DeleteObjectsCommand).map((c) => c.args[0].input)).toEqual([
      { Bucket: 'models', Delete: { Objects: [2, 1, 0].map((i) => ({ Key: versions[i]!.Key })), Quiet: true } },
    ]);
    expect(result).toEqual({ deleted: [versions[2]!.Key], notDeleted: [versions[0]!.Key, versions[1]!.Key] });
    expect(lines).toEqual([
      `Could not delete s3://models/${versions[0]!.Key}: AccessDenied Access Denied. It stays; the next deployment tries again.`,
      `Could not delete s3://models/${versions[1]!.Key}: InternalError We encountered an internal error. Please try again.. ` +
        'It stays; the next deployment tries again.',
      `Deleted s3://models/${versions[2]!.Key} (an older version the retention no longer keeps).`,
    ]);
  });

  it('reports a refused DeleteObjects call (AccessDenied) instead of failing the deployment', async () => {
    s3.on(ListObjectsV2Command).resolves({ Contents: versions, IsTruncated: false });
    s3.on(DeleteObjectsCommand).rejects(Object.assign(new Error('Access Denied'), { name: 'AccessDenied' }));
    const lines: string[] = [];
    const result = await onEvent(event, new S3Client({}), NOW, (line) => lines.push(line));
    expect(result.deleted).toEqual([]);
    expect(result.notDeleted).toHaveLength(3);
    expect(lines).toEqual([
      'Could not delete 3 old archive(s) from s3://models: Access Denied. They stay; the next deployment tries again.',
    ]);
  });
});
