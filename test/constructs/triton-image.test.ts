import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { InferenceAmiVersion, TritonImage, TritonMultiModelEndpoint } from '../../constructs';

function endpointWith(image: TritonImage, region = 'us-west-2') {
  const stack = new Stack(new App(), 'S', { env: { region, account: '111122223333' } });
  const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { image, initialInstanceCount: 2 });
  return { stack, endpoint };
}

function imageOf(stack: Stack): unknown {
  const [model] = Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::Model')) as Array<{
    Properties: { PrimaryContainer: { Image: unknown } };
  }>;
  return model.Properties.PrimaryContainer.Image;
}

describe('TritonImage.fromSageMakerDlc', () => {
  it('pins the version asked for', () => {
    const { stack, endpoint } = endpointWith(TritonImage.fromSageMakerDlc('24.05'));
    expect(imageOf(stack)).toBe('763104351884.dkr.ecr.us-west-2.amazonaws.com/sagemaker-tritonserver:24.05-py3');
    expect(endpoint.tritonVersion).toBe('24.05');
  });

  it('warns that a version newer than 24.09 needs a newer GPU driver unless inferenceAmiVersion is set', () => {
    const { stack } = endpointWith(TritonImage.fromSageMakerDlc('25.04'));
    Annotations.fromStack(stack).hasWarning('/S/Mme', Match.stringLikeRegexp('^Triton 25.04 is newer than 24.09.*inferenceAmiVersion'));
    const pinned = new Stack(new App(), 'P', { env: { region: 'us-west-2', account: '111122223333' } });
    new TritonMultiModelEndpoint(pinned, 'Mme', {
      image: TritonImage.fromSageMakerDlc('25.04'),
      initialInstanceCount: 2,
      inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_3_1,
    });
    Annotations.fromStack(pinned).hasNoWarning('/P/Mme', Match.stringLikeRegexp('is newer than'));
    Annotations.fromStack(endpointWith(TritonImage.fromSageMakerDlc('24.09')).stack).hasNoWarning(
      '/S/Mme',
      Match.stringLikeRegexp('is newer than'),
    );
  });

  it('rejects a version that is not YY.MM', () => {
    expect(() => endpointWith(TritonImage.fromSageMakerDlc('latest'))).toThrow(/version 'latest' is not of the form YY.MM/);
  });
});

describe('TritonImage.fromAsset', () => {
  it("builds this project's triton-image/ by default and lets the role pull it", () => {
    const { stack, endpoint } = endpointWith(TritonImage.fromAsset());
    expect(JSON.stringify(imageOf(stack))).toMatch(/cdk-hnb659fds-container-assets-111122223333-us-west-2:[0-9a-f]{64}/);
    expect(endpoint.tritonVersion).toBe('24.09');
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'] }),
        ]),
      },
    });
    const assets = stack.node.findAll().filter((c) => c.node.id === 'TritonImageAsset');
    expect(assets).toHaveLength(1);
    // Built for SageMaker's x86_64 GPU instances, also on an Apple-silicon machine.
    const manifest = (image: TritonImage) => {
      const app = endpointWith(image).stack.node.root as App;
      const assembly = app.synth();
      const docker = JSON.parse(readFileSync(join(assembly.directory, 'S.assets.json'), 'utf8')).dockerImages as Record<
        string,
        { source: { platform?: string } }
      >;
      return Object.values(docker)[0]!.source.platform;
    };
    expect(manifest(TritonImage.fromAsset())).toBe('linux/amd64');
    expect(manifest(TritonImage.fromAsset(undefined, { platform: Platform.LINUX_ARM64 }))).toBe('linux/arm64');
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('multi-models=true'));
  });

  it('warns when the Dockerfile neither uses a Triton base nor sets the multi-models label', () => {
    const { stack } = endpointWith(TritonImage.fromAsset(join(__dirname, 'fixtures', 'image-without-mme-label')));
    Annotations.fromStack(stack).hasWarning(
      '/S/Mme',
      Match.stringLikeRegexp('LABEL com.amazonaws.sagemaker.capabilities.multi-models=true'),
    );
  });

  it('fails synth for a missing directory or a directory without Dockerfile', () => {
    expect(() => endpointWith(TritonImage.fromAsset(join(__dirname, 'no-such-dir')))).toThrow(/is not a directory/);
    expect(() => endpointWith(TritonImage.fromAsset(__dirname))).toThrow(/no Dockerfile at/);
  });
});

describe('TritonImage.fromEcrRepository', () => {
  it('uses the repository URI with the tag and grants pull on that repository', () => {
    const stack = new Stack(new App(), 'S', { env: { region: 'us-west-2', account: '111122223333' } });
    const repository = ecr.Repository.fromRepositoryName(stack, 'Repo', 'my-triton');
    const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', {
      image: TritonImage.fromEcrRepository(repository, '24.09-custom'),
      initialInstanceCount: 2,
    });
    expect(endpoint.tritonVersion).toBe('24.09');
    expect(JSON.stringify(imageOf(stack))).toContain('.dkr.ecr.us-west-2.');
    expect(JSON.stringify(imageOf(stack))).toContain('/my-triton:24.09-custom');
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
            Resource: {
              'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ecr:us-west-2:111122223333:repository/my-triton']],
            },
          }),
        ]),
      },
    });
  });

  it('imports a repository by name with the latest tag by default', () => {
    const { stack, endpoint } = endpointWith(TritonImage.fromEcrRepositoryName('team/triton'));
    expect(JSON.stringify(imageOf(stack))).toContain('/team/triton:latest');
    expect(endpoint.tritonVersion).toBeUndefined();
  });
});

describe('TritonImage.fromAsset build args', () => {
  const TRITON_IMAGE = join(__dirname, '..', '..', 'triton-image');

  it('checks drivers against buildArgs.TRITON_VERSION, not the Dockerfile default', () => {
    const { stack, endpoint } = endpointWith(
      TritonImage.fromAsset(TRITON_IMAGE, { buildArgs: { TRITON_VERSION: '25.04', BASE_DIGEST: '' } }),
    );
    expect(endpoint.tritonVersion).toBe('25.04');
    Annotations.fromStack(stack).hasWarning('/S/Mme', Match.stringLikeRegexp('^Triton 25.04 is newer than 24.09'));
  });

  it('takes the release from the tag of buildArgs.BASE_IMAGE', () => {
    const image = TritonImage.fromAsset(TRITON_IMAGE, {
      buildArgs: { BASE_IMAGE: '763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.08-py3' },
    });
    expect(endpointWith(image).endpoint.tritonVersion).toBe('24.08');
    const digested = TritonImage.fromAsset(TRITON_IMAGE, {
      buildArgs: { BASE_IMAGE: `nvcr.io/nvidia/tritonserver:24.05-py3@sha256:${'a'.repeat(64)}`, TRITON_VERSION: '24.05' },
    });
    expect(endpointWith(digested).endpoint.tritonVersion).toBe('24.05');
  });

  it('fails synth when the build args name two releases, or a release that is not YY.MM', () => {
    expect(() =>
      endpointWith(
        TritonImage.fromAsset(TRITON_IMAGE, {
          buildArgs: { BASE_IMAGE: 'nvcr.io/nvidia/tritonserver:24.08-py3', TRITON_VERSION: '24.09' },
        }),
      ),
    ).toThrow(/BASE_IMAGE is Triton 24.08 but buildArgs.TRITON_VERSION is 24.09/);
    expect(() => endpointWith(TritonImage.fromAsset(TRITON_IMAGE, { buildArgs: { TRITON_VERSION: 'latest' } }))).toThrow(
      /buildArgs.TRITON_VERSION 'latest' is not of the form YY.MM/,
    );
  });

  it('fails synth when another release is asked of a Dockerfile whose default base is pinned by digest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pinned-image-'));
    try {
      writeFileSync(
        join(dir, 'Dockerfile'),
        `ARG TRITON_VERSION=24.09\nARG BASE_DIGEST=sha256:${'b'.repeat(64)}\n` +
          `FROM nvcr.io/nvidia/tritonserver:\${TRITON_VERSION}-py3@\${BASE_DIGEST}\n`,
      );
      expect(() => endpointWith(TritonImage.fromAsset(dir, { buildArgs: { TRITON_VERSION: '24.08' } }))).toThrow(
        /also set buildArgs.BASE_DIGEST/,
      );
      expect(
        endpointWith(TritonImage.fromAsset(dir, { buildArgs: { TRITON_VERSION: '24.08', BASE_DIGEST: '' } })).endpoint.tritonVersion,
      ).toBe('24.08');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
