// @ts-check
// Lambda handler of ModelArchive's upload (constructs/model-archive.ts), run by aws-cdk-lib's CustomResourceProvider,
// which sends the CloudFormation response. One resource per archive: it copies the archive the CDK CLI staged in the
// asset bucket to its content-named key `<prefix><name>-<hash>.tar.gz` in the model bucket, server-side, so nothing
// passes through the function (no scratch space, a fixed memory, whatever the archive's size):
// - the key holds the archive's content hash, so an object already there with the archive's size is that archive:
//   nothing is copied (a redeploy, a rollback to it, a second stack sharing the bucket);
// - up to 5 GiB one CopyObject, larger ones a multipart copy of UploadPartCopy ranges ("You can create a copy of your
//   object up to 5 GB in a single atomic action... to copy an object greater than 5 GB, you must use the multipart
//   upload Upload Part - Copy (UploadPartCopy) API", https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html),
//   aborted when a part fails so that no hidden parts stay behind;
// - Delete copies and deletes nothing: a replaced archive may still be invoked, and its removal is the retention's
//   (AWS asks to stop invoking a model before removing it,
//   https://docs.aws.amazon.com/sagemaker/latest/dg/add-models-to-endpoint.html).
// The attributes TargetModel and ObjectKey are what the construct hands out, so anything that uses a name waits for
// its archive. Plain JavaScript, deployed as written; it needs only the AWS SDK of the Lambda Node.js runtime.

const {
  S3Client,
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  UploadPartCopyCommand,
} = require('@aws-sdk/client-s3');

/** CopyObject's limit: larger objects need a multipart copy. */
const SINGLE_COPY_LIMIT = 5 * 1024 ** 3;
/** S3 allows at most 10,000 parts; parts of at least 512 MiB keep a 5 TiB object under that. */
const PART_SIZE = 512 * 1024 ** 2;
/** Parts copied at once: each is a server-side copy, so the function only waits. */
const PARALLEL_PARTS = 8;

/**
 * @typedef {{
 *   SourceBucket: string,
 *   SourceKey: string,
 *   Bucket: string,
 *   Key: string,
 *   TargetModel: string,
 *   Size: string | number,
 * }} CopyProperties
 * @typedef {{ RequestType: 'Create' | 'Update' | 'Delete', PhysicalResourceId?: string, ResourceProperties: CopyProperties }} CopyEvent
 * @typedef {{ singleCopyLimit?: number, partSize?: number, log?: (line: string) => void }} CopyOptions
 */

/** @param {CopyEvent} event */
exports.handler = async (event) => onEvent(event, new S3Client({}), { log: console.log });

/**
 * @param {CopyEvent} event
 * @param {S3Client} s3
 * @param {CopyOptions} [options]
 */
async function onEvent(event, s3, options = {}) {
  const props = event.ResourceProperties;
  const data = { TargetModel: props.TargetModel, ObjectKey: props.Key, Copied: 'false' };
  const physicalId = `s3://${props.Bucket}/${props.Key}`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId ?? physicalId, Data: data };
  const log = options.log ?? (() => {});
  // CloudFormation passes numbers as strings.
  const size = Number(props.Size);
  const existing = await sizeOf(s3, props.Bucket, props.Key);
  if (existing === size) {
    log(`s3://${props.Bucket}/${props.Key} is there (${size} bytes; its name is its content hash): not copied again.`);
    return { PhysicalResourceId: physicalId, Data: data };
  }
  if (existing !== undefined) log(`s3://${props.Bucket}/${props.Key} has ${existing} bytes, not ${size}: copying it again.`);
  const source = { Bucket: props.SourceBucket, Key: props.SourceKey };
  if (size <= (options.singleCopyLimit ?? SINGLE_COPY_LIMIT)) {
    await s3.send(new CopyObjectCommand({ Bucket: props.Bucket, Key: props.Key, CopySource: copySource(source) }));
  } else {
    await multipartCopy(s3, source, { Bucket: props.Bucket, Key: props.Key }, size, options.partSize ?? PART_SIZE);
  }
  log(`Copied s3://${source.Bucket}/${source.Key} to s3://${props.Bucket}/${props.Key} (${size} bytes).`);
  return { PhysicalResourceId: physicalId, Data: { ...data, Copied: 'true' } };
}

/**
 * The object's size, or undefined when there is none. A missing key answers 404 only with s3:ListBucket, which the
 * construct grants for this key.
 * @param {S3Client} s3
 * @param {string} bucket
 * @param {string} key
 * @returns {Promise<number | undefined>}
 */
async function sizeOf(s3, bucket, key) {
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return head.ContentLength;
  } catch (err) {
    const status = /** @type {{ $metadata?: { httpStatusCode?: number } }} */ (err).$metadata?.httpStatusCode;
    if (status === 404 || (err instanceof Error && err.name === 'NotFound')) return undefined;
    throw err;
  }
}

/**
 * `bucket/key` with the key URL-encoded, as x-amz-copy-source takes it.
 * @param {{ Bucket: string, Key: string }} source
 */
function copySource(source) {
  return `${source.Bucket}/${source.Key.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Copies `size` bytes in parts of `partSize`, PARALLEL_PARTS at a time; aborts the upload when anything fails.
 * @param {S3Client} s3
 * @param {{ Bucket: string, Key: string }} source
 * @param {{ Bucket: string, Key: string }} target
 * @param {number} size
 * @param {number} partSize
 */
async function multipartCopy(s3, source, target, size, partSize) {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand(target));
  try {
    const count = Math.ceil(size / partSize);
    /** @type {Array<{ PartNumber: number, ETag?: string }>} */
    const parts = new Array(count);
    let next = 0;
    let failed = false;
    const worker = async () => {
      while (next < count && !failed) {
        const index = next++;
        const first = index * partSize;
        const last = Math.min(size, first + partSize) - 1;
        const out = await s3.send(
          new UploadPartCopyCommand({
            ...target,
            UploadId,
            PartNumber: index + 1,
            CopySource: copySource(source),
            CopySourceRange: `bytes=${first}-${last}`,
          }),
        );
        parts[index] = { PartNumber: index + 1, ETag: out.CopyPartResult?.ETag };
      }
    };
    const stopOthers = (/** @type {unknown} */ err) => {
      failed = true;
      throw err;
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, count) }, () => worker().catch(stopOthers)));
    await s3.send(new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: parts } }));
  } catch (err) {
    try {
      await s3.send(new AbortMultipartUploadCommand({ ...target, UploadId }));
    } catch {
      // The bucket's lifecycle rule removes an upload left open (TritonMultiModelEndpoint's created bucket).
    }
    throw err;
  }
}

exports.onEvent = onEvent;
