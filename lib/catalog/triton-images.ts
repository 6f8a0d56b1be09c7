// Facts about the SageMaker NVIDIA Triton images, by version: the ECR account per region for `sagemaker-tritonserver`,
// which versions the SageMaker SDK lists in which regions, the SAGEMAKER_TRITON_* variables each release's `serve`
// script reads, and the version we pin by default (the GPUs and drivers each release needs: triton-releases.ts).
// Plain data: the CLI loads it, so no aws-cdk-lib.
//
// Source of accounts and versions, read 2026-11-30: aws/sagemaker-python-sdk at commit
// a24812666d258d9d19c9a82d0c9385ca0bd3ba01 (2026-08-21), sagemaker-core/src/sagemaker/core/image_uri_config/
// sagemaker-tritonserver.json (last changed by 7c7f7a937 "feat: triton v26.05"). Every region has one account in
// every version that lists it. Deliberately our own table: aws-cdk-lib's DLC_REPOSITORY_ACCOUNTS misses several
// regions that host Triton (af-south-1, ap-northeast-3, ...).

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

// ---- Versions by region ----

/** Regions first listed with 25.04: the 23.12–24.09 entries do not have them. */
const REGIONS_SINCE_25_04 = [
  'ap-east-2',
  'ap-south-2',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'eu-central-2',
  'eu-south-2',
  'me-central-1',
  'mx-central-1',
];
const CHINA = ['cn-north-1', 'cn-northwest-1'];

/** The versions sagemaker-tritonserver.json lists, each with the regions of ACCOUNTS its entry leaves out. */
const VERSIONS_WITHOUT: Readonly<Record<string, readonly string[]>> = {
  '23.12': REGIONS_SINCE_25_04,
  '24.01': REGIONS_SINCE_25_04,
  '24.03': REGIONS_SINCE_25_04,
  '24.05': REGIONS_SINCE_25_04,
  '24.09': REGIONS_SINCE_25_04,
  '25.04': ['ap-southeast-6'],
  '25.09': CHINA,
  '26.05': CHINA,
};

/** The versions the SageMaker SDK lists, oldest first. */
export function listedTritonVersions(): string[] {
  return Object.keys(VERSIONS_WITHOUT).sort();
}

/** The regions where the SDK lists `version`, sorted; undefined when it does not list the version at all. */
export function tritonVersionRegions(version: string): string[] | undefined {
  const without = VERSIONS_WITHOUT[version];
  if (!without) return undefined;
  return tritonImageRegions().filter((region) => !without.includes(region));
}

/** The listed versions available in `region`, oldest first. */
export function tritonVersionsIn(region: string): string[] {
  return listedTritonVersions().filter((version) => !VERSIONS_WITHOUT[version]!.includes(region));
}

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
 * Throws on an unknown region (naming the known ones), a malformed version, or a listed version the SDK does not
 * list in `region` (naming the versions it lists there). A version the SDK does not list at all is not refused here:
 * AWS publishes more tags than the SDK lists; callers warn about it.
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
  const regions = tritonVersionRegions(version);
  if (regions && !regions.includes(region)) {
    throw new Error(
      `The SageMaker Triton image ${version} is not listed for region '${region}' (the SageMaker SDK lists it in ` +
        `${regions.length} regions). Versions listed in ${region}: ${tritonVersionsIn(region).join(', ') || 'none'}.`,
    );
  }
  return `${registry.account}.dkr.ecr.${region}.${registry.domainSuffix}/${TRITON_REPOSITORY}:${version}-py3`;
}

// ---- Variables the SageMaker serve script reads, by release ----

/**
 * The first Triton release whose SageMaker entrypoint (triton-inference-server/server docker/sagemaker/serve) reads
 * each variable; variables not listed here were read by every release that has the script (22.03 on). Found with
 * `git log -S<variable> -- docker/sagemaker/serve` and the first release branch holding that commit:
 * - SHM_*: cb0c444a3 "Enable Triton for SageMaker MME mode" (#4181), in r22.05;
 * - TENSORFLOW_VERSION: 545f303fc (#4835), in r22.09;
 * - MODEL_LOAD_GPU_LIMIT: 3e1258d3c "Add Ensemble support in SageMaker MME" (#5002), in r23.01;
 * - DISABLE_MODEL_NAMESPACING: 82f8585e8 "Enable model namespacing in SageMaker entrypoint" (#5540), in r23.04;
 * - ADDITIONAL_ARGS, ALLOW_METRICS, METRICS_PORT: 7fb485885 (#5910), in r23.07;
 * - INFERENCE_TYPE: 96e7cb5b4 "feat: add generate support to sagemaker_server" (#8047), in r25.03.
 * An older serve ignores the variable silently, so the setting would have no effect.
 */
export const SERVE_VARIABLE_SINCE: Readonly<Record<string, string>> = {
  SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE: '22.05',
  SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE: '22.05',
  SAGEMAKER_TRITON_TENSORFLOW_VERSION: '22.09',
  SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT: '23.01',
  SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING: '23.04',
  SAGEMAKER_TRITON_ADDITIONAL_ARGS: '23.07',
  SAGEMAKER_TRITON_ALLOW_METRICS: '23.07',
  SAGEMAKER_TRITON_METRICS_PORT: '23.07',
  SAGEMAKER_TRITON_INFERENCE_TYPE: '25.03',
};

/** The variables of `env` that Triton `version`'s serve script does not read yet, with the first release that does. */
export function unreadServeVariables(version: string, env: Record<string, string>): Array<{ variable: string; since: string }> {
  return Object.keys(env)
    .filter((variable) => (SERVE_VARIABLE_SINCE[variable] ?? '00.00') > version)
    .map((variable) => ({ variable, since: SERVE_VARIABLE_SINCE[variable]! }));
}
