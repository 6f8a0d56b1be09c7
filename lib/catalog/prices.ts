// On-demand prices of SageMaker real-time inference (hosting) instances, in USD per instance-hour, for the GPU types
// a multi-model endpoint can use. Plain data for cost estimates; the CLI loads it, so no aws-cdk-lib.
//
// These are list prices and change; treat every figure as "as read on PRICES_DATE", never as a quote.

/** Where the figures come from. */
export const PRICES_SOURCE =
  'Amazon SageMaker pricing, "Real-Time Inference" on-demand tab (https://aws.amazon.com/sagemaker/pricing/), ' +
  'transcribed in public repositories (goerlitz/nlp-classification notebooks/10kGNAD/sagemaker/README.md for the ' +
  'us-east-1 g4dn/p3 rows; ZindiAfrica/AI-for-Equity-Challenges-Getting-Started-with-AWS-Resources ' +
  'sagemaker_instance_pricing.md for us-east-2) and cross-checked against other cost tables for g5/g6.';

/** The day the figures were read. */
export const PRICES_DATE = '2026-11-30';

type PriceTable = Readonly<Record<string, number>>;

// us-east-1 (N. Virginia). ml.g4dn.4xlarge = $1.505/h, so one instance running a year is 1.505 × 8760 ≈ $13,184.
const US_EAST_1: PriceTable = {
  'ml.g4dn.xlarge': 0.7364,
  'ml.g4dn.2xlarge': 0.94,
  'ml.g4dn.4xlarge': 1.505,
  'ml.g4dn.8xlarge': 2.72,
  'ml.g4dn.12xlarge': 4.89,
  'ml.g4dn.16xlarge': 5.44,
  'ml.g5.xlarge': 1.408,
  'ml.g5.2xlarge': 1.515,
  'ml.g5.4xlarge': 2.03,
  'ml.g5.8xlarge': 3.061,
  'ml.g5.16xlarge': 5.12,
  'ml.g5.12xlarge': 7.09,
  'ml.g5.24xlarge': 10.18,
  'ml.g5.48xlarge': 20.36,
  'ml.g6.xlarge': 0.9765,
  'ml.g6.2xlarge': 1.222,
  'ml.g6.16xlarge': 4.246,
  'ml.g6.12xlarge': 5.752,
  'ml.g6.24xlarge': 8.344,
  'ml.p3.2xlarge': 3.825,
  'ml.p3.8xlarge': 14.688,
  'ml.p3.16xlarge': 28.152,
};

// us-east-2 (Ohio): the same list prices as us-east-1 for the rows that were published (g4dn 2x/4x/8x/12x/16x,
// g5.16xlarge); the other sizes are left out rather than assumed.
const US_EAST_2: PriceTable = {
  'ml.g4dn.2xlarge': 0.94,
  'ml.g4dn.4xlarge': 1.505,
  'ml.g4dn.8xlarge': 2.72,
  'ml.g4dn.12xlarge': 4.89,
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

/**
 * The on-demand hourly price in USD of one `instanceType` (`ml.` prefix optional) in `region`, or undefined when the
 * catalog has no figure for that pair (callers should then say so instead of guessing).
 */
export function onDemandHourlyPriceUsd(instanceType: string, region: string): number | undefined {
  const name = instanceType.startsWith('ml.') ? instanceType : `ml.${instanceType}`;
  return PRICES[region]?.[name];
}
