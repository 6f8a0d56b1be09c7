import {
  ContainerFailure,
  explainContainerFailure,
  explainInvokeFailure,
  tritonErrorText,
} from '../../lib/catalog/container-failures';
import { MmeError } from '../../lib/errors';
import { knownFailure } from '../../lib/logs/known-failures';

const endpoint = { kind: 'endpoint' as const, endpoint: 'mme' };
const local = { kind: 'local' as const };
const failure = (status: number, text: string, operation: ContainerFailure['operation'] = 'invoke'): ContainerFailure => ({
  operation,
  targetModel: 'resnet.tar.gz',
  status,
  text,
});

describe('Triton\'s error body', () => {
  it('is unwrapped from {"error": ...}, else kept as text', () => {
    expect(tritonErrorText('{"error":"CUDA out of memory"}')).toBe('CUDA out of memory');
    expect(tritonErrorText(Buffer.from(' {"error":"x"} \n'))).toBe('x');
    expect(tritonErrorText('')).toBe('');
    expect(tritonErrorText('<html>bad gateway</html>')).toBe('<html>bad gateway</html>');
  });
});

describe('a container failure, explained', () => {
  it('404: not loaded; on an endpoint, check the TargetModel name under the prefix', () => {
    expect(explainContainerFailure(failure(404, ''), endpoint)).toBe(
      'resnet.tar.gz is not loaded in the container that took the call (HTTP 404). Check that resnet.tar.gz is the name of an ' +
        "archive under the endpoint's S3 prefix (`mme-deploy list --endpoint mme`), spelled exactly, with its .tar.gz; then " +
        'call again: SageMaker loads a model on the call that needs it.',
    );
    expect(explainContainerFailure(failure(404, ''), local)).toBe(
      'resnet.tar.gz is not loaded in the container (HTTP 404). ' +
        'Load it first: `mme-deploy local load <archive.tar.gz> --name resnet.tar.gz`.',
    );
  });

  it('409: already registered; SageMaker takes it for loaded', () => {
    expect(explainContainerFailure(failure(409, 'model already exists', 'load'), endpoint)).toMatch(
      new RegExp(
        /^Triton already holds a model registered as resnet\.tar\.gz \(HTTP 409: model already exists\)\. /.source +
          /SageMaker takes a 409 on load for "already loaded"/.source,
      ),
    );
    expect(explainContainerFailure(failure(409, '', 'load'), local)).toMatch(
      /already loaded \(HTTP 409\)\. .*mme-deploy local unload resnet\.tar\.gz/,
    );
  });

  it('507: out of memory, with the ways to make it fit', () => {
    const message = explainContainerFailure(failure(507, 'CUDA out of memory. Tried to allocate 2.00 GiB'), endpoint);
    expect(message).toMatch(
      /^Out of GPU or host memory running resnet\.tar\.gz \(HTTP 507: CUDA out of memory\. Tried to allocate 2\.00 GiB\)\./,
    );
    expect(message).toContain('SageMaker answers a 507 by unloading the least recently used models and trying again');
    expect(message).toContain('put fewer or smaller models on each instance (`mme-deploy plan` estimates the fit), use an instance type');
    expect(message).toContain('environment.modelLoadGpuLimit (SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT)');
    expect(explainContainerFailure(failure(507, 'failed to load: OOM', 'load'), local)).toMatch(
      /^Out of GPU memory loading resnet\.tar\.gz \(HTTP 507: failed to load: OOM\)\. On SageMaker the endpoint would now unload/,
    );
  });

  it('507 with "No space left on device" is the disk, not the GPU', () => {
    expect(explainContainerFailure(failure(507, 'write failed: No space left on device', 'load'), endpoint)).toMatch(
      new RegExp(
        /^resnet\.tar\.gz failed loading \(HTTP 507: write failed: No space left on device\)\. /.source +
          /The instance's disk is full\..*more local storage/.source,
      ),
    );
  });

  // python_backend src/shm_manager.cc:121-129: the text ends in boost's "No space left on device", which the
  // SageMaker front end answers with 507 (sagemaker_server.cc:894-911); /dev/shm is full, not the disk.
  const shm =
    "failed to load 'pre' version 1: Internal: Unable to initialize shared memory key 'triton_python_backend_shm_region_4' " +
    "to requested size (16777216 bytes). If you are running Triton inside docker, use '--shm-size' flag to control the " +
    'shared memory region size. Each Python backend model instance requires at least 1 MB of shared memory. ' +
    'Error: No space left on device';

  it('507 from the python backend\'s shared memory is /dev/shm, with its own fix, ahead of the disk', () => {
    for (const site of [endpoint, local]) {
      const message = explainContainerFailure(failure(507, shm, 'load'), site);
      expect(message).toContain('The python backend ran out of shared memory (/dev/shm) for a model instance\'s region of 16 MiB');
      expect(message).toContain('environment.pythonShmDefaultSize (SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE');
      expect(message).not.toContain('disk is full');
    }
  });

  it('reads the cause and fix from the one failure table that logs reads too', () => {
    const texts = [
      shm,
      "[request id: 7] input byte size mismatch for input 'IN' for model 'm'. Expected 12, got 8",
      "inference input 'IN' data-type is 'FP64', but model 'm' expects 'FP32'",
      'Stub process is not healthy.',
      "failed to load 'x' version 1: Invalid argument: unable to find backend library for backend 'pyhton'",
    ];
    for (const text of texts) {
      const known = knownFailure(text)!;
      expect(known).toBeDefined();
      for (const status of [400, 500]) {
        const message = explainContainerFailure(failure(status, text), endpoint);
        expect(message).toContain(known.title);
        expect(message).toContain(known.fix);
      }
    }
  });

  it('400 load failures point at validate and local load', () => {
    const text = "failed to load 'resnet.tar.gz' version 1: Invalid argument: unable to find 'model.plan'";
    expect(explainContainerFailure(failure(400, text), endpoint)).toBe(
      `Triton refused to invoke resnet.tar.gz (HTTP 400): ${text}. The archive did not load: check it with ` +
        '`mme-deploy validate --mme <repository>` and try the load on a GPU machine with `mme-deploy local load <archive>`; ' +
        "the container log has Triton's full load output.",
    );
    expect(explainContainerFailure(failure(400, 'Invalid argument: bad config', 'load'), local)).toContain('The archive did not load');
  });

  it('400 FP16/BF16 JSON refusals point at binary+json', () => {
    const text = 'sending BF16 data via JSON is not supported. Please use the binary data format for output';
    expect(explainContainerFailure(failure(400, text), endpoint)).toContain(
      'Triton takes and returns FP16 and BF16 only as binary tensor data: invoke sends binary+json by itself when it knows ' +
        'the datatypes (give --model <archive or directory>), or pass --binary.',
    );
  });

  it('400 shape and datatype refusals point at --model on an endpoint', () => {
    const text = "unexpected shape for input 'INPUT__0' for model 'resnet.tar.gz'. Expected [-1,3,224,224], got [150528]";
    expect(explainContainerFailure(failure(400, text), endpoint)).toContain(
      "The request sent input 'INPUT__0' of model 'resnet.tar.gz' with shape [150528]; the model takes [-1,3,224,224]. " +
        'Send the shape the config declares',
    );
    expect(explainContainerFailure(failure(400, "unexpected inference input 'X' for model 'm'"), endpoint)).toContain(
      'Give --model <archive or directory> so invoke shapes',
    );
  });

  it('400 for a decoupled model says it cannot be invoked through SageMaker', () => {
    const text = "HTTP end point doesn't support models with decoupled transaction policy";
    expect(explainContainerFailure(failure(400, text), endpoint)).toContain('a decoupled model cannot be invoked through it');
  });

  it('keeps the local container hints', () => {
    expect(explainContainerFailure(failure(400, '', 'load'), local)).toBe(
      'Triton refused to load resnet.tar.gz (HTTP 400) with no error text. Was the container started with -e SAGEMAKER_MULTI_MODEL=true?',
    );
    expect(explainContainerFailure(failure(400, 'Invalid "url" \'/x\'', 'load'), local)).toContain('mount --models-dir there');
    expect(explainContainerFailure(failure(405, '', 'list'), local)).toContain("is --url Triton's SageMaker port?");
    expect(explainContainerFailure(failure(500, 'boom'), endpoint)).toBe('The container answered HTTP 500 to invoke resnet.tar.gz: boom.');
  });
});

describe('an InvokeEndpoint failure, explained', () => {
  const context = { endpoint: 'mme', targetModel: 'resnet.tar.gz', region: 'eu-west-1' };
  const sdkError = (name: string, fields: Record<string, unknown> = {}, message = name) =>
    Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 424 }, ...fields });

  it('unwraps a ModelError to the container\'s status and Triton\'s text, with the log stream', () => {
    const err = explainInvokeFailure(
      sdkError('ModelError', {
        OriginalStatusCode: 507,
        OriginalMessage: '{"error":"CUDA_OUT_OF_MEMORY"}',
        LogStreamArn: 'arn:aws:logs:eu-west-1:1:log-group:/aws/sagemaker/Endpoints/mme:log-stream:AllTraffic/i-1',
      }),
      context,
    );
    expect(err).toBeInstanceOf(MmeError);
    expect(err!.code).toBe('MODEL_ERROR');
    expect(err!.message).toMatch(/^Out of GPU or host memory running resnet\.tar\.gz \(HTTP 507: CUDA_OUT_OF_MEMORY\)\./);
    expect(err!.message).toMatch(
      / Container logs: arn:aws:logs:eu-west-1:1:log-group:\/aws\/sagemaker\/Endpoints\/mme:log-stream:AllTraffic\/i-1$/,
    );
  });

  it('reads the status from the message when OriginalStatusCode is missing, and calls a load failure a load', () => {
    const err = explainInvokeFailure(
      sdkError('ModelError', { OriginalMessage: '{"error":"failed to load \'resnet.tar.gz\', failed to poll from model repository"}' },
        'Received client error (400) from primary with message "...".'),
      context,
    );
    expect(err!.message).toMatch(/^Triton refused to load resnet\.tar\.gz \(HTTP 400\): failed to load .*The archive did not load/);
  });

  it('says a model still loading will be ready soon', () => {
    const err = explainInvokeFailure(sdkError('ModelNotReadyException', {}, 'Model not ready'), context);
    expect([err!.code, err!.message]).toEqual([
      'AWS_NOT_READY',
      'resnet.tar.gz is still being downloaded and loaded on endpoint mme (ModelNotReadyException: Model not ready). ' +
        'InvokeEndpoint waits 60 s; SageMaker goes on loading the model for up to 360 s, so call again in a moment.',
    ]);
  });

  it('names a missing endpoint, a single-model endpoint and a TargetModel SageMaker cannot download', () => {
    const explain = (message: string) => explainInvokeFailure(sdkError('ValidationError', {}, message), context);
    expect(explain('Endpoint mme of account 123456789012 not found.')).toMatchObject({
      code: 'AWS_NOT_FOUND',
      message: "Endpoint 'mme' does not exist in eu-west-1. Check the name and --region.",
    });
    expect(explain('Endpoint mme is not a multi-model endpoint and does not support target model header.')!.code).toBe('ENDPOINT_UNUSABLE');
    const download = explain(
      'Failed to download model data(bucket: b, key: models/resnet.tar.gz). Please ensure that there is an object located at the URL.',
    );
    expect(download!.code).toBe('AWS_NOT_FOUND');
    expect(download!.message).toContain('Check the name with `mme-deploy list --endpoint mme`');
  });

  it('leaves other AWS errors to the general explanation', () => {
    expect(explainInvokeFailure(sdkError('AccessDeniedException'), context)).toBeUndefined();
    expect(explainInvokeFailure(sdkError('ValidationError', {}, 'Input is malformed'), context)).toBeUndefined();
  });
});
