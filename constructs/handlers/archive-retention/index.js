// @ts-check
// Lambda handler of ModelArchive's retention (constructs/model-archive.ts), run by aws-cdk-lib's CustomResourceProvider
// after the archives of a deployment are copied. It ranks the versions of each archive by the construct's own deploy
// history, never by S3's LastModified (anyone who may write to the bucket can refresh a date: re-uploading an old
// archive would make it look newest and get the versions really deployed after it deleted). The history is one JSON
// object per construct (HistoryKey), which this handler alone writes: per archive, the keys it deployed, in deploy
// order, each with the time it went live. A version was replaced when the next one in that list went live.
//
// What it deletes, per archive: versions in the history, other than the live one, that the retention no longer keeps
// (beyond the newest KeepVersions previous ones and replaced at least KeepForSeconds ago), and only keys of that
// archive's versioned-name pattern (`<prefix><name>-<hash>.tar.gz`, lib/bundle/target-model-name.ts): a key pushed by
// hand is not in the history and stays, and an edited history cannot name another object. It deletes nothing when the
// stack or the archive is removed: AWS asks to stop invoking a model before removing it
// (https://docs.aws.amazon.com/sagemaker/latest/dg/add-models-to-endpoint.html).
//
// A cleanup that fails is reported (the resource's Problems attribute and the function's log), never a failed
// deployment: the archives are uploaded and the endpoint serves them; failing here would roll the stack back for a
// few old files. Plain JavaScript, deployed as written; it needs only the AWS SDK of the Lambda Node.js runtime.

const { S3Client, DeleteObjectsCommand, GetObjectCommand, PutObjectCommand } = require('@aws-sdk/client-s3');

/**
 * @typedef {{ Prefix: string, Pattern: string, Live: string }} ArchiveSpec
 * @typedef {{
 *   Bucket: string,
 *   HistoryKey: string,
 *   Archives: ArchiveSpec[],
 *   KeepVersions?: string | number,
 *   KeepForSeconds?: string | number,
 * }} RetentionProperties
 * @typedef {{
 *   RequestType: 'Create' | 'Update' | 'Delete',
 *   ResourceProperties: RetentionProperties,
 *   OldResourceProperties?: Partial<RetentionProperties>,
 * }} RetentionEvent
 * @typedef {{ key: string, deployed: string }} Deployed
 * @typedef {{ format: 1, archives: Record<string, Deployed[]> }} History
 * @typedef {{ deleted: string[], notDeleted: string[], problems: string[] }} RetentionResult
 */

/** @param {RetentionEvent} event */
exports.handler = async (event) => {
  const result = await onEvent(event, new S3Client({}), new Date(), console.log);
  return {
    Data: {
      Deleted: String(result.deleted.length),
      NotDeleted: String(result.notDeleted.length),
      Problems: summary(result.problems),
    },
  };
};

/**
 * The problems in at most 1,000 characters: a custom resource's whole response may hold 4,096 bytes
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html), and a failed response
 * would fail the deployment this handler must not fail.
 * @param {string[]} problems
 */
function summary(problems) {
  if (problems.length === 0) return 'none';
  const all = problems.join(' ');
  if (all.length <= 1000) return all;
  return `${all.slice(0, 900)}... (${problems.length} problems in all; the function's log lists each)`;
}

/**
 * @param {RetentionEvent} event
 * @param {S3Client} s3
 * @param {Date} now
 * @param {(line: string) => void} [log]
 * @returns {Promise<RetentionResult>}
 */
async function onEvent(event, s3, now, log = () => {}) {
  /** @type {RetentionResult} */
  const result = { deleted: [], notDeleted: [], problems: [] };
  if (event.RequestType === 'Delete') return result;
  const props = event.ResourceProperties;
  const report = (/** @type {string} */ problem) => {
    result.problems.push(problem);
    log(problem);
  };
  const read = await readHistory(s3, props.Bucket, props.HistoryKey);
  if (!('history' in read)) {
    // Without the history nothing can be ranked, and writing a new one would forget what it listed.
    report(`${read.problem} Nothing was deleted; the next deployment tries again.`);
    return result;
  }
  if (read.problem) report(read.problem);
  const history = read.history;

  // CloudFormation passes numbers as strings.
  const keepVersions = Number(props.KeepVersions ?? 0);
  const keepForMs = Number(props.KeepForSeconds ?? 0) * 1000;
  /** @type {string[]} */
  const doomed = [];
  for (const archive of props.Archives) {
    const previousLive = event.OldResourceProperties?.Archives?.find((a) => a.Prefix === archive.Prefix)?.Live;
    const deployed = recordDeploy(history.archives[archive.Prefix] ?? [], archive, previousLive, now);
    history.archives[archive.Prefix] = deployed;
    // Previous versions, most recently live first; each was replaced when the one after it in the history went live.
    for (let i = deployed.length - 2, rank = 0; i >= 0; i--, rank++) {
      const replacedAt = Date.parse(deployed[i + 1].deployed);
      const replacedAgo = Number.isNaN(replacedAt) ? Infinity : +now - replacedAt;
      if (rank >= keepVersions && replacedAgo >= keepForMs) doomed.push(deployed[i].key);
    }
  }

  // DeleteObjects answers 200 and lists the keys it could not delete in Errors
  // (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html).
  for (let i = 0; i < doomed.length; i += 1000) {
    const batch = doomed.slice(i, i + 1000);
    try {
      const out = await s3.send(
        new DeleteObjectsCommand({ Bucket: props.Bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
      for (const error of out.Errors ?? []) {
        result.notDeleted.push(error.Key ?? '');
        const why = `${error.Code} ${error.Message}`;
        report(`Could not delete s3://${props.Bucket}/${error.Key}: ${why}. It stays; the next deployment tries again.`);
      }
    } catch (err) {
      result.notDeleted.push(...batch);
      const what = `${batch.length} old archive(s) from s3://${props.Bucket}`;
      report(`Could not delete ${what}: ${messageOf(err)}. They stay; the next deployment tries again.`);
    }
  }
  result.deleted = doomed.filter((key) => !result.notDeleted.includes(key));
  for (const key of result.deleted) log(`Deleted s3://${props.Bucket}/${key} (an older version the retention no longer keeps).`);

  // What was deleted leaves the history; what could not be deleted stays in it, for the next deployment.
  const gone = new Set(result.deleted);
  for (const prefix of Object.keys(history.archives)) {
    history.archives[prefix] = history.archives[prefix].filter((d) => !gone.has(d.key));
  }
  try {
    await s3.send(
      new PutObjectCommand({
        Bucket: props.Bucket,
        Key: props.HistoryKey,
        Body: `${JSON.stringify(history, null, 1)}\n`,
        ContentType: 'application/json',
      }),
    );
  } catch (err) {
    report(`Could not write the deploy history s3://${props.Bucket}/${props.HistoryKey}: ${messageOf(err)}.`);
  }
  return result;
}

/**
 * The history with `archive.Live` as the latest deploy. Entries that are not versions of this archive (an edited
 * history) are dropped; a live version deployed before moves to the end (a rollback, or a revert of the content).
 * The live version of the previous deployment (OldResourceProperties) joins when the history lacks it: a history
 * lost, or a stack deployed before the history existed.
 * @param {Deployed[]} entries
 * @param {ArchiveSpec} archive
 * @param {string | undefined} previousLive
 * @param {Date} now
 * @returns {Deployed[]}
 */
function recordDeploy(entries, archive, previousLive, now) {
  const pattern = new RegExp(archive.Pattern);
  const own = entries.filter((d) => d && typeof d.key === 'string' && typeof d.deployed === 'string' && pattern.test(d.key));
  if (previousLive && previousLive !== archive.Live && pattern.test(previousLive) && !own.some((d) => d.key === previousLive)) {
    own.push({ key: previousLive, deployed: '' }); // when it went live is unknown: it counts as replaced long ago
  }
  if (own.length > 0 && own[own.length - 1].key === archive.Live) return own;
  return [...own.filter((d) => d.key !== archive.Live), { key: archive.Live, deployed: now.toISOString() }];
}

/**
 * The history, an empty one when there is none yet (with a problem when what is there is not a history), or the
 * problem that kept it from being read.
 * @param {S3Client} s3
 * @param {string} bucket
 * @param {string} key
 * @returns {Promise<{ history: History, problem?: string } | { problem: string }>}
 */
async function readHistory(s3, bucket, key) {
  /** @type {History} */
  const empty = { format: 1, archives: {} };
  let text;
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    text = out.Body ? await out.Body.transformToString() : '';
  } catch (err) {
    const status = /** @type {{ $metadata?: { httpStatusCode?: number } }} */ (err).$metadata?.httpStatusCode;
    if (status === 404 || (err instanceof Error && err.name === 'NoSuchKey')) return { history: empty };
    return { problem: `Could not read the deploy history s3://${bucket}/${key}: ${messageOf(err)}.` };
  }
  try {
    const parsed = JSON.parse(text);
    if (parsed && parsed.format === 1 && parsed.archives && typeof parsed.archives === 'object' && !Array.isArray(parsed.archives)) {
      /** @type {History} */
      const history = { format: 1, archives: {} };
      for (const [prefix, list] of Object.entries(parsed.archives)) if (Array.isArray(list)) history.archives[prefix] = list;
      return { history };
    }
  } catch {
    // not JSON: below
  }
  return {
    history: empty,
    problem:
      `s3://${bucket}/${key} is not a deploy history of mme-deploy; a new one starts, and versions it listed are ` +
      'no longer deleted (delete them by hand if you want them gone).',
  };
}

/** @param {unknown} err */
function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

exports.onEvent = onEvent;
exports.summary = summary;
