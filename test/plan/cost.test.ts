import { savingRow } from '../../lib/cli/plan';
import { onDemandHourlyPriceUsd } from '../../lib/catalog/prices';
import { compareHostingCost, HOURS_PER_MONTH, HOURS_PER_YEAR } from '../../lib/plan/cost';

describe('hosting cost', () => {
  it('reproduces the seed: two ensembles on one ml.g4dn.4xlarge save 50 %, over $13,000 a year', () => {
    const hourlyPriceUsd = onDemandHourlyPriceUsd('ml.g4dn.4xlarge', 'us-east-1')!;
    const cost = compareHostingCost({ hourlyPriceUsd, mmeInstances: 1, models: 2 });
    expect(cost.savingPercent).toBe(50);
    // One instance-year at the published hourly price.
    expect(cost.savingPerYearUsd).toBeCloseTo(hourlyPriceUsd * HOURS_PER_YEAR, 2);
    expect(cost.savingPerYearUsd).toBeGreaterThan(13_000);
    expect(cost.singleModel.perYearUsd).toBeCloseTo(2 * cost.multiModel.perYearUsd, 2);
  });

  it('prices a month at 730 hours and a year at 8,760', () => {
    const cost = compareHostingCost({ hourlyPriceUsd: 2, mmeInstances: 3, models: 10 });
    expect(cost.multiModel).toEqual({ instances: 3, perHourUsd: 6, perMonthUsd: 6 * HOURS_PER_MONTH, perYearUsd: 6 * HOURS_PER_YEAR });
    expect(cost.singleModel.perMonthUsd).toBe(20 * 730);
    expect(cost.savingPercent).toBe(70);
  });

  it('labels the cost the right way round when the MME costs more', () => {
    const cost = compareHostingCost({ hourlyPriceUsd: 1, mmeInstances: 3, models: 2 });
    expect(savingRow({ ...cost, hourlyPriceUsd: 1 } as Parameters<typeof savingRow>[0])).toEqual([
      'MME costs 50 % more',
      '',
      '$730.00',
      '$8,760.00',
    ]);
    const saving = compareHostingCost({ hourlyPriceUsd: 1, mmeInstances: 1, models: 2 });
    expect(savingRow(saving as Parameters<typeof savingRow>[0])[0]).toBe('saving 50 %');
  });

  it('shows a negative saving when the MME has more instances than there are models', () => {
    expect(compareHostingCost({ hourlyPriceUsd: 1, mmeInstances: 3, models: 2 }).savingPercent).toBe(-50);
  });
});
