import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEFAULT_TRITON_VERSION,
  isTritonVersion,
  listedTritonVersions,
  tritonImageRegions,
  tritonImageRegistry,
  tritonImageUri,
  tritonVersionRegions,
  tritonVersionsIn,
  unreadServeVariables,
} from '../../lib/catalog/triton-images';

describe('SageMaker Triton image registry', () => {
  it('builds the us-east-1 URI of the default version from the DLC account', () => {
    expect(tritonImageUri('us-east-1')).toBe('763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3');
  });

  it('uses the amazonaws.com.cn suffix and the China account in both China regions', () => {
    expect(tritonImageUri('cn-north-1', '24.09')).toBe('727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/sagemaker-tritonserver:24.09-py3');
    expect(tritonImageRegistry('cn-northwest-1')).toEqual({ account: '727897471807', domainSuffix: 'amazonaws.com.cn' });
  });

  it('covers every region of the reference table, including those aws-cdk-lib lacks', () => {
    const expected: Record<string, string> = {
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
    };
    const sharedAccountRegions =
      'us-east-1 us-east-2 us-west-1 us-west-2 eu-west-1 eu-west-2 eu-west-3 eu-central-1 eu-north-1 ' +
      'ap-northeast-1 ap-northeast-2 ap-south-1 ap-southeast-1 ap-southeast-2 ca-central-1 sa-east-1';
    for (const r of sharedAccountRegions.split(' ')) {
      expected[r] = '763104351884';
    }
    for (const [region, account] of Object.entries(expected)) {
      expect([region, tritonImageRegistry(region)]).toEqual([region, { account, domainSuffix: 'amazonaws.com' }]);
    }
    expect(tritonImageRegions()).toHaveLength(Object.keys(expected).length + 2);
  });

  it('rejects an unknown region with a message naming the known ones', () => {
    expect(() => tritonImageUri('xx-east-9')).toThrow(
      /No SageMaker Triton image is known for region 'xx-east-9'. Known regions: af-south-1, .*us-west-2/,
    );
  });

  it('rejects versions that are not YY.MM', () => {
    expect(isTritonVersion('24.09')).toBe(true);
    for (const v of ['latest', '24.9', '24.09-py3', '2024.09']) expect(isTritonVersion(v)).toBe(false);
    expect(() => tritonImageUri('us-east-1', 'latest')).toThrow(/not of the form YY.MM/);
  });

  it('pins the same default version as the custom image Dockerfile', () => {
    const dockerfile = readFileSync(join(__dirname, '..', '..', 'triton-image', 'Dockerfile'), 'utf8');
    expect(/^ARG TRITON_VERSION=(\S+)/m.exec(dockerfile)?.[1]).toBe(DEFAULT_TRITON_VERSION);
  });
});

describe('SageMaker Triton images by version (sagemaker-tritonserver.json)', () => {
  it('lists the versions of the SDK table, oldest first', () => {
    expect(listedTritonVersions()).toEqual(['23.12', '24.01', '24.03', '24.05', '24.09', '25.04', '25.09', '26.05']);
    expect(tritonVersionRegions('24.07')).toBeUndefined();
  });

  it('knows which regions each version is listed in', () => {
    expect(tritonVersionRegions('24.09')).toHaveLength(26);
    expect(tritonVersionRegions('25.04')).toHaveLength(35);
    expect(tritonVersionRegions('25.04')).not.toContain('ap-southeast-6');
    expect(tritonVersionRegions('26.05')).toHaveLength(34);
    expect(tritonVersionRegions('26.05')).not.toContain('cn-north-1');
    expect(tritonVersionsIn('ap-southeast-6')).toEqual(['25.09', '26.05']);
    expect(tritonVersionsIn('us-east-1')).toEqual(listedTritonVersions());
  });

  it('refuses a listed version in a region that lacks it, but not an unlisted version', () => {
    expect(() => tritonImageUri('me-central-1', '24.09')).toThrow(
      /not listed for region 'me-central-1'.*Versions listed in me-central-1: 25.04, 25.09, 26.05/,
    );
    expect(tritonImageUri('me-central-1', '25.04')).toBe(
      '914824155844.dkr.ecr.me-central-1.amazonaws.com/sagemaker-tritonserver:25.04-py3',
    );
    expect(tritonImageUri('us-east-1', '24.07')).toBe('763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.07-py3');
  });
});

describe('serve variables by release (docker/sagemaker/serve history)', () => {
  it('names the variables an older serve ignores, with the release that first reads each', () => {
    const env = {
      SAGEMAKER_TRITON_INFERENCE_TYPE: 'generate',
      SAGEMAKER_TRITON_ADDITIONAL_ARGS: '--x',
      SAGEMAKER_TRITON_THREAD_COUNT: '4',
      MY_VAR: '1',
    };
    expect(unreadServeVariables('23.05', env)).toEqual([
      { variable: 'SAGEMAKER_TRITON_INFERENCE_TYPE', since: '25.03' },
      { variable: 'SAGEMAKER_TRITON_ADDITIONAL_ARGS', since: '23.07' },
    ]);
    expect(unreadServeVariables('25.03', env)).toEqual([]);
  });
});
