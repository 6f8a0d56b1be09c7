// @ts-check
// Lambda handler of ModelArchive's retention (constructs/model-archive.ts), run by aws-cdk-lib's CustomResourceProvider
// after each deployment of new archives. Versioned archives are named `<name>-<hash>.tar.gz`
// (lib/bundle/target-model-name.ts, whose pattern the construct passes in); for each name this deletes the previous
// versions the retention no longer keeps. It never deletes the live version (the one just deployed), nor any version
// newer than it (pushed by hand since), and it deletes nothing when the stack or the archive is removed: AWS asks to
// stop invoking a model before removing it (https://docs.aws.amazon.com/sagemaker/latest/dg/add-models-to-endpoint.html).
// Plain JavaScript, deployed as written; it needs only the AWS SDK of the Lambda Node.js runtime.

const { S3Client, DeleteObjectsCommand, paginateListObjectsV2 } = require('@aws-sdk/client-s3');

/**
 * @typedef {{ Prefix: string, Pattern: string, Live: string }} ArchiveSpec
 * @typedef {{
 *   Bucket: string,
 *   Archives: ArchiveSpec[],
 *   KeepVersions?: string | number,
 *   KeepForSeconds?: string | number,
 * }} RetentionProperties
 * @typedef {{ RequestType: 'Create' | 'Update' | 'Delete', ResourceProperties: RetentionProperties }} RetentionEvent
 * @typedef {{ Key: string, LastModified: Date }} Version
 */

/** @param {RetentionEvent} event */
exports.handler = async (event) => {
  const result = await onEvent(event, new S3Client({}), new Date(), console.log);
  return { Data: { Deleted: String(result.deleted.length), NotDeleted: String(result.notDeleted.length) } };
};

/**
 * @param {RetentionEvent} event
 * @param {S3Client} s3
 * @param {Date} now
 * @param {(line: string) => void} [log]
 * @returns {Promise<{ deleted: string[], notDeleted: string[] }>}
 */
async function onEvent(event, s3, now, log = () => {}) {
  if (event.RequestType === 'Delete') return { deleted: [], notDeleted: [] };
  const props = event.ResourceProperties;
  // CloudFormation passes numbers as strings.
  const keepVersions = Number(props.KeepVersions ?? 0);
  const keepForMs = Number(props.KeepForSeconds ?? 0) * 1000;
  /** @type {string[]} */
  const doomed = [];
  for (const archive of props.Archives) {
    const versions = await listVersions(s3, props.Bucket, archive);
    const live = versions.find((v) => v.Key === archive.Live);
    if (!live) {
      log(`s3://${props.Bucket}/${archive.Live} is not there: keeping every version of it.`);
      continue;
    }
    // Older than the live version, newest first; each was replaced when the next newer one was written.
    const older = versions.filter((v) => v.LastModified < live.LastModified).sort((a, b) => +b.LastModified - +a.LastModified);
    older.forEach((version, i) => {
      const replacedAt = (i === 0 ? live : older[i - 1]).LastModified;
      if (i >= keepVersions && +now - +replacedAt >= keepForMs) doomed.push(version.Key);
    });
  }
  // A cleanup that fails is reported, never a failed deployment: the archives are uploaded and the endpoint serves them;
  // failing here would roll the whole stack back for a few old files. DeleteObjects answers 200 and lists the keys it
  // could not delete in Errors (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html).
  /** @type {string[]} */
  const notDeleted = [];
  for (let i = 0; i < doomed.length; i += 1000) {
    const batch = doomed.slice(i, i + 1000);
    try {
      const out = await s3.send(
        new DeleteObjectsCommand({ Bucket: props.Bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
      for (const error of out.Errors ?? []) {
        notDeleted.push(error.Key ?? '');
        const why = `${error.Code} ${error.Message}`;
        log(`Could not delete s3://${props.Bucket}/${error.Key}: ${why}. It stays; the next deployment tries again.`);
      }
    } catch (err) {
      notDeleted.push(...batch);
      const message = err instanceof Error ? err.message : String(err);
      const what = `${batch.length} old archive(s) from s3://${props.Bucket}`;
      log(`Could not delete ${what}: ${message}. They stay; the next deployment tries again.`);
    }
  }
  const deleted = doomed.filter((key) => !notDeleted.includes(key));
  for (const key of deleted) log(`Deleted s3://${props.Bucket}/${key} (an older version the retention no longer keeps).`);
  return { deleted, notDeleted };
}

/**
 * Every version of one archive: keys under its prefix that match its versioned-name pattern.
 * @param {S3Client} s3
 * @param {string} bucket
 * @param {ArchiveSpec} archive
 * @returns {Promise<Version[]>}
 */
async function listVersions(s3, bucket, archive) {
  const pattern = new RegExp(archive.Pattern);
  /** @type {Version[]} */
  const versions = [];
  for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket: bucket, Prefix: archive.Prefix })) {
    for (const object of page.Contents ?? []) {
      if (object.Key && object.LastModified && pattern.test(object.Key)) {
        versions.push({ Key: object.Key, LastModified: object.LastModified });
      }
    }
  }
  return versions;
}

exports.onEvent = onEvent;
