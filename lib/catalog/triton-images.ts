// Where the SageMaker NVIDIA Triton images live: the ECR account per region for `sagemaker-tritonserver`, the image
// URI, and the version we pin by default. Plain data: the CLI loads it, so no aws-cdk-lib.
//
// Source, read 2026-11-30: aws/sagemaker-python-sdk sagemaker-core/src/sagemaker/core/image_uri_config/
// sagemaker-tritonserver.json (entries 25.09/26.05 for the commercial regions; the China account from the ≤24.09
// entries), summarised in mme-deploy's reference aws-anchors-and-user-pain.md §4.8. Deliberately our own table:
// aws-cdk-lib's DLC_REPOSITORY_ACCOUNTS misses several regions that host Triton (af-south-1, ap-northeast-3, ...).

/** The repository name in every region's account. */
export const TRITON_REPOSITORY = 'sagemaker-tritonserver';

/**
 * The Triton version the constructs and the custom image use unless told otherwise. 24.09 runs on g4dn with the
 * default SageMaker GPU driver; newer images need `inferenceAmiVersion` there. triton-image/Dockerfile pins the same.
 */
export const DEFAULT_TRITON_VERSION = '24.09';

export interface TritonImageRegistry {
  /** The AWS account that owns `sagemaker-tritonserver` in the region. */
  account: string;
  /** The domain suffix of the region's partition: `amazonaws.com`, or `amazonaws.com.cn` in China. */
  domainSuffix: string;
}

const DLC = '763104351884';
const COM = 'amazonaws.com';

const ACCOUNTS: Readonly<Record<string, string>> = {
  'us-east-1': DLC,
  'us-east-2': DLC,
  'us-west-1': DLC,
  'us-west-2': DLC,
  'ca-central-1': DLC,
  'sa-east-1': DLC,
  'eu-west-1': DLC,
  'eu-west-2': DLC,
  'eu-west-3': DLC,
  'eu-central-1': DLC,
  'eu-north-1': DLC,
  'ap-northeast-1': DLC,
  'ap-northeast-2': DLC,
  'ap-south-1': DLC,
  'ap-southeast-1': DLC,
  'ap-southeast-2': DLC,
  'af-south-1': '626614931356',
  'ap-east-1': '871362719292',
  'ap-east-2': '975050140332',
  'ap-northeast-3': '364406365360',
  'ap-south-2': '772153158452',
  'ap-southeast-3': '907027046896',
  'ap-southeast-4': '457447274322',
  'ap-southeast-5': '550225433462',
  'ap-southeast-6': '633930458069',
  'ap-southeast-7': '590183813437',
  'ca-west-1': '204538143572',
  'eu-central-2': '380420809688',
  'eu-south-1': '692866216735',
  'eu-south-2': '503227376785',
  'il-central-1': '780543022126',
  'me-central-1': '914824155844',
  'me-south-1': '217643126080',
  'mx-central-1': '637423239942',
  'cn-north-1': '727897471807',
  'cn-northwest-1': '727897471807',
};

/** Every region with a known Triton registry, sorted. */
export function tritonImageRegions(): string[] {
  return Object.keys(ACCOUNTS).sort();
}

/** The registry of `region`, or undefined when the table does not know it. */
export function tritonImageRegistry(region: string): TritonImageRegistry | undefined {
  const account = ACCOUNTS[region];
  if (account === undefined) return undefined;
  return { account, domainSuffix: region.startsWith('cn-') ? 'amazonaws.com.cn' : COM };
}

const VERSION = /^\d{2}\.\d{2}$/;

/** Whether `version` has the `YY.MM` shape of Triton release tags (e.g. `24.09`). */
export function isTritonVersion(version: string): boolean {
  return VERSION.test(version);
}

/**
 * The URI of the SageMaker Triton image `version` (YY.MM) in `region`, e.g.
 * `763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3`.
 * Throws on an unknown region (naming the known ones) or a malformed version.
 */
export function tritonImageUri(region: string, version: string = DEFAULT_TRITON_VERSION): string {
  if (!isTritonVersion(version)) {
    throw new Error(`Triton version '${version}' is not of the form YY.MM (for example '${DEFAULT_TRITON_VERSION}').`);
  }
  const registry = tritonImageRegistry(region);
  if (!registry) {
    throw new Error(
      `No SageMaker Triton image is known for region '${region}'. Known regions: ${tritonImageRegions().join(', ')}. ` +
        'Use a custom image (TritonImage.fromAsset or fromEcrRepository) in other regions.',
    );
  }
  return `${registry.account}.dkr.ecr.${region}.${registry.domainSuffix}/${TRITON_REPOSITORY}:${version}-py3`;
}
