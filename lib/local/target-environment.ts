// What separates this machine's GPU and container from the SageMaker instance an archive is meant for: the GPU's
// compute capability and memory (nvidia-smi), its driver against the Triton release's needs, and the container's
// /dev/shm (docker inspect). Each difference that could make a model load here and fail there is a finding.

import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { endpointTarget } from '../catalog/endpoint-target';
import type { GpuInstanceType } from '../catalog/instance-types';
import { SAGEMAKER_SHM_BYTES, SageMakerGpuDriver, sageMakerGpuDriver } from '../catalog/sagemaker-hosting';
import { driverSupport, tritonRelease } from '../catalog/triton-releases';
import { MmeError } from '../errors';

/** One GPU of this machine, as `nvidia-smi --query-gpu` reports it. */
export interface LocalGpu {
  readonly name: string;
  /** Absent when the driver's nvidia-smi predates the `compute_cap` field. */
  readonly computeCapability?: string;
  readonly driverVersion: string;
  readonly memoryMiB?: number;
}

/** The local Triton container, as `docker inspect` describes it. */
export interface LocalContainer {
  readonly id: string;
  /** Size of its /dev/shm (Docker's default 64 MiB when it was started without --shm-size). */
  readonly shmBytes: number;
  /** Started with --ipc=host: it shares the host's /dev/shm, whatever its size. */
  readonly ipcHost: boolean;
  /** NVIDIA_TRITON_SERVER_VERSION of its image, when the image sets it. */
  readonly tritonVersion?: string;
}

/** The SageMaker side: instance type, Triton release and the driver the InferenceAmiVersion gives. */
export interface TargetEnvironment {
  readonly instanceType: GpuInstanceType;
  readonly tritonVersion: string;
  readonly driver: SageMakerGpuDriver;
  readonly inferenceAmiVersion?: string;
}

export interface TargetOptions {
  /** @default ml.g4dn.xlarge, the constructs' default */
  readonly instanceType?: string;
  /** @default the local container's release, else DEFAULT_TRITON_VERSION */
  readonly tritonVersion?: string;
  /** @default - none: SageMaker's default driver */
  readonly inferenceAmiVersion?: string;
}

/** A difference between here and the target, worded for the user. */
export interface TargetFinding {
  readonly severity: 'warning' | 'note';
  readonly code: string;
  readonly message: string;
}

/** Resolves the target's facts from the catalog; an unknown instance type, release form or AMI version is a usage error. */
export function resolveTarget(options: TargetOptions, container?: LocalContainer): TargetEnvironment {
  const { instanceType, tritonVersion } = endpointTarget({ ...options, multiModel: true }, container?.tritonVersion);
  const driver = sageMakerGpuDriver(options.inferenceAmiVersion);
  if (!driver) {
    throw new MmeError(
      'USAGE',
      `--inference-ami-version ${options.inferenceAmiVersion}: not an InferenceAmiVersion the catalog knows ` +
        '(al2-ami-sagemaker-inference-gpu-2, -2-1, -3-1).',
    );
  }
  return {
    instanceType,
    tritonVersion,
    driver,
    ...(options.inferenceAmiVersion ? { inferenceAmiVersion: options.inferenceAmiVersion } : {}),
  };
}

/**
 * Whether `program` is an executable file on `env.PATH`, searched as spawn searches it: /usr/bin:/bin when the
 * environment has no PATH (nodejs/node:doc/api/child_process.md:55-59), an empty entry meaning the current directory
 * as for execvp. Looking first spares a process start for a tool this machine lacks (nvidia-smi without a GPU, docker
 * without Docker), which spawn only finds missing after forking.
 */
function onPath(program: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '/usr/bin:/bin').split(delimiter).some((dir) => {
    const candidate = join(dir === '' ? '.' : dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/** Runs a program found on `env.PATH`; resolves undefined when it is missing, fails or takes more than 10 s. */
function run(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (!onPath(program, env)) return Promise.resolve(undefined);
  return new Promise((resolvePromise) => {
    execFile(program, args, { env, timeout: 10_000, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' }, (err, stdout) =>
      resolvePromise(err ? undefined : stdout),
    );
  });
}

/** This machine's GPUs, or undefined when nvidia-smi is not there or fails (no GPU, no driver). */
export async function queryLocalGpus(env: NodeJS.ProcessEnv): Promise<LocalGpu[] | undefined> {
  const fields = 'name,driver_version,memory.total';
  // compute_cap arrived in nvidia-smi with driver 510; older ones refuse the whole query, so ask again without it.
  const withCap = await run('nvidia-smi', [`--query-gpu=${fields},compute_cap`, '--format=csv,noheader,nounits'], env);
  const text = withCap ?? (await run('nvidia-smi', [`--query-gpu=${fields}`, '--format=csv,noheader,nounits'], env));
  if (text === undefined) return undefined;
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [name = '', driverVersion = '', memory, cap] = line.split(',').map((cell) => cell.trim());
      const memoryMiB = Number(memory);
      return {
        name,
        driverVersion,
        ...(Number.isFinite(memoryMiB) && memory !== '' ? { memoryMiB } : {}),
        ...(cap && /^\d+\.\d+$/.test(cap) ? { computeCapability: cap } : {}),
      };
    });
}

/**
 * The container behind `url`: `container` when named, else the one running container that publishes the URL's port.
 * Undefined when docker is not there, or no single container matches.
 */
export async function inspectLocalContainer(
  url: URL,
  container: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<LocalContainer | undefined> {
  let id = container;
  if (id === undefined) {
    const port = url.port || '80';
    const listed = await run('docker', ['ps', '--filter', `publish=${port}`, '--format', '{{.ID}}'], env);
    const ids = (listed ?? '').split('\n').filter((line) => line.trim() !== '');
    if (ids.length !== 1) return undefined;
    id = ids[0]!.trim();
  }
  const inspected = await run('docker', ['inspect', id], env);
  if (inspected === undefined) return undefined;
  try {
    const [first] = JSON.parse(inspected) as Array<{
      Id?: string;
      HostConfig?: { ShmSize?: number; IpcMode?: string };
      Config?: { Env?: string[] };
    }>;
    if (!first) return undefined;
    const version = first.Config?.Env?.find((e) => e.startsWith('NVIDIA_TRITON_SERVER_VERSION='))?.split('=')[1];
    return {
      id: (first.Id ?? id).slice(0, 12),
      // Docker reports 0 for "the default", which is 64 MiB.
      shmBytes: first.HostConfig?.ShmSize || 64 * 1024 * 1024,
      ipcHost: first.HostConfig?.IpcMode === 'host',
      ...(version ? { tritonVersion: version } : {}),
    };
  } catch {
    return undefined;
  }
}

export interface LocalEnvironment {
  /** Undefined when nvidia-smi could not be run. */
  readonly gpus?: readonly LocalGpu[];
  /** Undefined when the container could not be inspected. */
  readonly container?: LocalContainer;
}

/**
 * What may differ between a load here and a load on `target`. `tensorrtPlans` names the archive's TensorRT plan
 * models: an engine runs only on the compute capability and TensorRT version it was built for.
 */
export function compareWithTarget(
  local: LocalEnvironment,
  target: TargetEnvironment,
  tensorrtPlans: readonly string[] = [],
): TargetFinding[] {
  const findings: TargetFinding[] = [];
  const gpu = local.gpus?.[0];
  const instance = target.instanceType;
  const release = tritonRelease(target.tritonVersion);
  const onTarget = `${instance.name} (${instance.gpuModel}, compute capability ${instance.computeCapability})`;

  if (!gpu) {
    findings.push({
      severity: 'note',
      code: 'local-gpu-unknown',
      message: 'nvidia-smi could not be run here, so this machine\'s GPU was not compared with ' + `${onTarget}.`,
    });
  } else {
    if (tensorrtPlans.length > 0 && gpu.computeCapability !== instance.computeCapability) {
      const here = gpu.computeCapability
        ? `compute capability ${gpu.computeCapability}`
        : 'an unknown compute capability (nvidia-smi has no compute_cap)';
      findings.push({
        severity: 'warning',
        code: 'tensorrt-plan-gpu',
        message:
          `This machine's ${gpu.name} has ${here}, the target ${onTarget} does not: a TensorRT engine only runs on the ` +
          `compute capability it was built for, so the plans of ${tensorrtPlans.map((m) => `'${m}'`).join(', ')} ` +
          'cannot both load here and there ' +
          '(TensorRT: "The engine plan file is generated on an incompatible device ... please rebuild"). ' +
          `Build them on a ${instance.gpuModel}` +
          `${release ? ` with TensorRT ${release.tensorrt} (Triton ${release.version}'s)` : ''}.`,
      });
    }
    if (gpu.memoryMiB !== undefined && gpu.memoryMiB > instance.gpuMemoryMiB) {
      findings.push({
        severity: 'warning',
        code: 'gpu-memory-larger',
        message:
          `This machine's ${gpu.name} has ${gpu.memoryMiB} MiB, the target's ${instance.gpuModel} ${instance.gpuMemoryMiB} MiB: ` +
          'models that fit here may run out of GPU memory there (HTTP 507, and SageMaker unloads other models to make room). ' +
          '`mme-deploy plan` estimates what fits.',
      });
    }
    if (release) {
      const here = driverSupport(release, gpu.driverVersion);
      const there = driverSupport(release, String(target.driver.branch));
      const driverThere =
        `driver ${target.driver.branch}` +
        (target.inferenceAmiVersion
          ? ` (${target.inferenceAmiVersion})`
          : ' (SageMaker\'s default; set inferenceAmiVersion for another)');
      if (there === 'unsupported') {
        findings.push({
          severity: 'warning',
          code: 'target-driver',
          message:
            `Triton ${release.version} (CUDA ${release.cuda}) needs driver ${release.nativeDriver} or, ` +
            'on data-center GPUs, one of the branches ' +
            `${release.forwardCompatibleBranches.map((b) => `R${b.branch}`).join(', ')}; the target runs ${driverThere}. ` +
            'Choose an inferenceAmiVersion whose driver is listed, or another Triton release.',
        });
      } else if (here === 'native' && there === 'forward-compatibility') {
        findings.push({
          severity: 'note',
          code: 'target-forward-compatibility',
          message:
            `Driver ${gpu.driverVersion} runs Triton ${release.version}'s CUDA ${release.cuda} natively here; ` +
            `the target's ${driverThere} runs it only through CUDA forward compatibility, ` +
            'which NGC\'s entrypoint (/opt/nvidia/nvidia_entrypoint.sh) sets up: keep it as the image\'s entrypoint.',
        });
      }
    }
  }

  const container = local.container;
  if (container?.ipcHost) {
    findings.push({
      severity: 'warning',
      code: 'shm-ipc-host',
      message:
        `The local container ${container.id} shares the host's /dev/shm (--ipc=host); ` +
        `a SageMaker endpoint gives ${SAGEMAKER_SHM_BYTES / 1048576} MiB and no way to enlarge it, ` +
        'so python models that load here may fail there ("Unable to initialize shared memory key"). ' +
        'Start the container without --ipc=host.',
    });
  } else if (container && container.shmBytes > SAGEMAKER_SHM_BYTES) {
    findings.push({
      severity: 'warning',
      code: 'shm-larger',
      message:
        `The local container ${container.id} has a ${Math.round(container.shmBytes / 1048576)} MiB /dev/shm; a SageMaker endpoint gives ` +
        `${SAGEMAKER_SHM_BYTES / 1048576} MiB and no --shm-size, ` +
        'so python models that load here may fail there ("Unable to initialize shared memory key"). ' +
        'Start the container without --shm-size, ' +
        'and lower SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE (at least 1 MiB) if python models do not fit.',
    });
  }
  if (container?.tritonVersion && container.tritonVersion !== target.tritonVersion) {
    findings.push({
      severity: 'warning',
      code: 'triton-version',
      message:
        `The local container runs Triton ${container.tritonVersion}, the target Triton ${target.tritonVersion}: ` +
        'test with the image you deploy.',
    });
  }
  return findings;
}
