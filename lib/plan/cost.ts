// What hosting the models costs: one multi-model endpoint on N instances versus one single-model endpoint per
// model on the same instance type. On-demand prices only (no savings plans); a month is 730 hours, a year 8,760.

export const HOURS_PER_MONTH = 730;
export const HOURS_PER_YEAR = 8760;

export interface HostingCost {
  readonly instances: number;
  readonly perHourUsd: number;
  readonly perMonthUsd: number;
  readonly perYearUsd: number;
}

export interface CostComparison {
  readonly hourlyPriceUsd: number;
  readonly multiModel: HostingCost;
  /** One endpoint with one instance per model. */
  readonly singleModel: HostingCost;
  readonly savingPerMonthUsd: number;
  readonly savingPerYearUsd: number;
  /** Share of the single-model cost the MME saves; negative when the MME costs more. */
  readonly savingPercent: number;
}

export function compareHostingCost(options: {
  readonly hourlyPriceUsd: number;
  readonly mmeInstances: number;
  readonly models: number;
}): CostComparison {
  const { hourlyPriceUsd, mmeInstances, models } = options;
  const multiModel = hostingCost(hourlyPriceUsd, mmeInstances);
  const singleModel = hostingCost(hourlyPriceUsd, models);
  return {
    hourlyPriceUsd,
    multiModel,
    singleModel,
    savingPerMonthUsd: cents(singleModel.perMonthUsd - multiModel.perMonthUsd),
    savingPerYearUsd: cents(singleModel.perYearUsd - multiModel.perYearUsd),
    savingPercent: models > 0 ? Math.round(((models - mmeInstances) / models) * 1000) / 10 : 0,
  };
}

function hostingCost(hourlyPriceUsd: number, instances: number): HostingCost {
  return {
    instances,
    perHourUsd: cents(hourlyPriceUsd * instances),
    perMonthUsd: cents(hourlyPriceUsd * instances * HOURS_PER_MONTH),
    perYearUsd: cents(hourlyPriceUsd * instances * HOURS_PER_YEAR),
  };
}

/** Rounds to whole cents so that reports show 13183.8, not 13183.800000000001. */
function cents(usd: number): number {
  return Math.round(usd * 100) / 100;
}
