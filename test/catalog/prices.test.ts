import { PRICES_DATE, PRICES_SOURCE, onDemandHourlyPriceUsd, pricedRegions, regionsPricing } from '../../lib/catalog/prices';
import { INSTANCE_TYPES, mmeInstanceTypeNames } from '../../lib/catalog/instance-types';

describe('on-demand SageMaker hosting prices', () => {
  it('prices ml.g4dn.4xlarge in us-east-1 at $1.505/h, so one instance-year is over $13,000', () => {
    const hourly = onDemandHourlyPriceUsd('ml.g4dn.4xlarge', 'us-east-1');
    expect(hourly).toBe(1.505);
    expect(hourly! * 24 * 365).toBeGreaterThan(13_000);
  });

  it('accepts the instance type without the ml. prefix', () => {
    expect(onDemandHourlyPriceUsd('g4dn.xlarge', 'us-east-1')).toBe(0.7364);
  });

  it('has a us-east-1 price for every g4dn and g5 type a GPU MME accepts', () => {
    for (const name of mmeInstanceTypeNames().filter((n) => /\.(g4dn|g5)\./.test(n))) {
      expect([name, onDemandHourlyPriceUsd(name, 'us-east-1')]).toEqual([name, expect.any(Number)]);
    }
  });

  it('prices only types AWS lists for GPU MMEs: no g6 and no multi-GPU rows', () => {
    const listed = new Set(mmeInstanceTypeNames());
    for (const t of INSTANCE_TYPES.filter((type) => !listed.has(type.name))) {
      expect([t.name, regionsPricing(t.name)]).toEqual([t.name, []]);
    }
    expect(onDemandHourlyPriceUsd('ml.g6.xlarge', 'us-east-1')).toBeUndefined();
  });

  it('says which regions price a type, and none for ml.p2.xlarge (no source found)', () => {
    expect(regionsPricing('ml.g4dn.xlarge')).toEqual(['us-east-1']);
    expect(regionsPricing('g4dn.4xlarge')).toEqual(['us-east-1', 'us-east-2']);
    expect(regionsPricing('ml.p2.xlarge')).toEqual([]);
  });

  it('answers undefined for an unknown region or type instead of guessing', () => {
    expect(onDemandHourlyPriceUsd('ml.g4dn.xlarge', 'xx-nowhere-1')).toBeUndefined();
    expect(onDemandHourlyPriceUsd('ml.m5.xlarge', 'us-east-1')).toBeUndefined();
  });

  it('prices more than one region and names its source and date', () => {
    expect(pricedRegions().length).toBeGreaterThan(1);
    expect(onDemandHourlyPriceUsd('ml.g4dn.4xlarge', 'us-east-2')).toBe(1.505);
    expect(PRICES_SOURCE).toMatch(/aws\.amazon\.com\/sagemaker\/pricing/);
    expect(PRICES_SOURCE).toContain('not read from AWS');
    expect(PRICES_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
