// On-demand prices of SageMaker real-time inference (hosting) instances, in USD per instance-hour, for the GPU types
// a multi-model endpoint can use. Plain data for cost estimates; the CLI loads it, so no aws-cdk-lib.
//
// What is covered, and no more: the pairs in PRICES below (us-east-1 for the GPU MME types except ml.p2.xlarge, and
// five rows of us-east-2). AWS publishes these prices on https://aws.amazon.com/sagemaker/pricing/ and in the AWS
// Price List offer file of AmazonSageMaker, neither of which could be read here; the figures are that page as
// transcribed in two public repositories (PRICES_SOURCE), not read from AWS itself. Every other region, and every
// type without a row, needs `--price`: a price is never guessed.
// Types AWS does not list for GPU MMEs (multi-GPU sizes, g6) have no row, since plan refuses them.
//
// These are list prices and change; treat every figure as "as read on PRICES_DATE", never as a quote.

/** Where the figures come from. */
export const PRICES_SOURCE =
  'Amazon SageMaker pricing, "Real-Time Inference" on-demand tab (https://aws.amazon.com/sagemaker/pricing/), as ' +
  'transcribed in public repositories, not read from AWS: goerlitz/nlp-classification ' +
  'notebooks/10kGNAD/sagemaker/README.md (us-east-1) and ZindiAfrica/AI-for-Equity-Challenges-Getting-Started-with-' +
  'AWS-Resources sagemaker_instance_pricing.md (us-east-2)';

/** The day the figures were read. */
export const PRICES_DATE = '2026-11-30';

type PriceTable = Readonly<Record<string, number>>;

// us-east-1 (N. Virginia). ml.g4dn.4xlarge = $1.505/h, so one instance running a year is 1.505 × 8760 ≈ $13,184.
const US_EAST_1: PriceTable = {
  'ml.g4dn.xlarge': 0.7364,
  'ml.g4dn.2xlarge': 0.94,
  'ml.g4dn.4xlarge': 1.505,
  'ml.g4dn.8xlarge': 2.72,
  'ml.g4dn.16xlarge': 5.44,
  'ml.g5.xlarge': 1.408,
  'ml.g5.2xlarge': 1.515,
  'ml.g5.4xlarge': 2.03,
  'ml.g5.8xlarge': 3.061,
  'ml.g5.16xlarge': 5.12,
  'ml.p3.2xlarge': 3.825,
};

// us-east-2 (Ohio): only the GPU MME rows its source published (g4dn 2x/4x/8x/16x, g5.16xlarge); the other sizes are
// left out rather than assumed.
const US_EAST_2: PriceTable = {
  'ml.g4dn.2xlarge': 0.94,
  'ml.g4dn.4xlarge': 1.505,
  'ml.g4dn.8xlarge': 2.72,
  'ml.g4dn.16xlarge': 5.44,
  'ml.g5.16xlarge': 5.12,
};

const PRICES: Readonly<Record<string, PriceTable>> = {
  'us-east-1': US_EAST_1,
  'us-east-2': US_EAST_2,
};

/** Regions with at least one price. */
export function pricedRegions(): string[] {
  return Object.keys(PRICES);
}

/** The regions where the catalog prices `instanceType` (`ml.` prefix optional); empty when none. */
export function regionsPricing(instanceType: string): string[] {
  const name = instanceType.startsWith('ml.') ? instanceType : `ml.${instanceType}`;
  return Object.keys(PRICES).filter((region) => PRICES[region]![name] !== undefined);
}

/**
 * The on-demand hourly price in USD of one `instanceType` (`ml.` prefix optional) in `region`, or undefined when the
 * catalog has no figure for that pair (callers should then ask for one instead of guessing).
 */
export function onDemandHourlyPriceUsd(instanceType: string, region: string): number | undefined {
  const name = instanceType.startsWith('ml.') ? instanceType : `ml.${instanceType}`;
  return PRICES[region]?.[name];
}
