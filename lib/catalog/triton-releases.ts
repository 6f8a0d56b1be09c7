// What each Triton container release (`nvcr.io/nvidia/tritonserver:<YY.MM>-py3`, and the SageMaker image built from
// the same release) needs from the GPU and its driver, and what it ships that a model depends on (TensorRT for
// plans, the Python the python backend's stub was built with). Plain data: the CLI and the validator load it.
//
// Every fact carries the page or file it was read from and the date it was read. NVIDIA's release notes repeat the
// driver list from release to release (26.04's notes still list R470 for CUDA 13), so the driver branches below are
// what NVIDIA states, not what anyone verified on SageMaker; callers turn them into warnings, never into errors.

import { isTritonVersion } from './triton-images';

/** A fact and where it was read. */
export interface CatalogSource {
  readonly fact: string;
  readonly url: string;
  /** The date the source was read (YYYY-MM-DD). */
  readonly read: string;
}

/** A driver branch usable through CUDA forward compatibility on data-center GPUs, from its minimum version on. */
export interface ForwardCompatibleBranch {
  /** The branch, e.g. `470` for R470. */
  readonly branch: number;
  /** The lowest driver of the branch NVIDIA lists, e.g. `470.57`. */
  readonly minimum: string;
}

export interface TritonRelease {
  /** `YY.MM`, e.g. `24.09`. */
  readonly version: string;
  /** The CUDA toolkit the release is built on. */
  readonly cuda: string;
  /** The driver that runs this CUDA natively; older drivers need forward compatibility (data-center GPUs only). */
  readonly nativeDriver: string;
  /** Older branches NVIDIA lists as usable on data-center GPUs (T4, A10G, ...) through the CUDA compat libraries. */
  readonly forwardCompatibleBranches: readonly ForwardCompatibleBranch[];
  /** The lowest CUDA compute capability the release supports, e.g. `6.0`. */
  readonly minComputeCapability: string;
  /** The TensorRT the image ships: a plan must be built with exactly this version. */
  readonly tensorrt: string;
  /** The Python the python backend's stub is built with: a conda-pack environment must match it. */
  readonly python: string;
  readonly ubuntu: string;
  readonly sources: readonly CatalogSource[];
}

const READ = '2026-12-01';
const SERVER = 'https://github.com/triton-inference-server/server/blob';
const PYTHON_BACKEND = 'https://github.com/triton-inference-server/python_backend/blob';
const COMPATIBILITY_MATRIX = `${SERVER}/e1db8a603d863b1317ee859bdeea2be19959462e/docs/introduction/compatibility.md`;
const NOTES = 'https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes';

/** R470, R525, R535 and R545 from their first listed versions: the list every 24.xx and 25.01 release note gives. */
const R470_TO_R545: readonly ForwardCompatibleBranch[] = [
  { branch: 470, minimum: '470.57' },
  { branch: 525, minimum: '525.85' },
  { branch: 535, minimum: '535.86' },
  { branch: 545, minimum: '545.23' },
];

const RELEASES: readonly TritonRelease[] = [
  {
    version: '24.09',
    cuda: '12.6.1',
    nativeDriver: '560.35.03',
    forwardCompatibleBranches: R470_TO_R545,
    minComputeCapability: '6.0',
    tensorrt: '10.4.0.26',
    python: '3.10',
    ubuntu: '22.04',
    sources: [
      {
        fact: 'CUDA 12.6.1; data-center drivers 470.57+ (R470), 525.85+, 535.86+, 545.23+; compute capability 6.0 and later',
        url: `${NOTES}/rel-24-09.html`,
        read: READ,
      },
      {
        fact: 'CUDA 12.6.1.006 with driver 560.35.03 (24.09 row of the vllm-python-py3 table, same CUDA base)',
        url: `${COMPATIBILITY_MATRIX}#L96`,
        read: READ,
      },
      {
        fact: 'TensorRT 10.4.0.26 (ARG TENSORRT_VERSION of the same release\'s build)',
        url: `${SERVER}/c3414c1314ff2eaaae1987735b1dc5fc3300e8be/Dockerfile.win10.min#L40`,
        read: READ,
      },
      {
        fact: 'the stub is built with Python 3.10 ("default version of the stub is Python 3.10")',
        url: `${PYTHON_BACKEND}/d84bb57b06c985162fe537b46593281589bfb4d5/README.md#L997`,
        read: READ,
      },
    ],
  },
  {
    version: '24.12',
    cuda: '12.6.3',
    nativeDriver: '560.35.05',
    forwardCompatibleBranches: R470_TO_R545,
    minComputeCapability: '6.0',
    tensorrt: '10.7.0.23',
    python: '3.12',
    ubuntu: '24.04',
    sources: [
      {
        fact:
          'Ubuntu 24.04 with Python 3.12; TensorRT 10.7.0.23; CUDA 12.6.3; drivers 470.57+, 525.85+, 535.86+, 545.23+; ' +
          'compute capability 6.0 and later',
        url: `${SERVER}/1344e8f410122b2621c79dc7356a8b5f8c8fa353/docs/introduction/release_notes.md#L41-L87`,
        read: READ,
      },
      {
        fact: 'CUDA 12.6.3.004 with driver 560.35.05 (24.12 vllm-python-py3 row)',
        url: `${COMPATIBILITY_MATRIX}#L93`,
        read: READ,
      },
    ],
  },
  {
    version: '25.01',
    cuda: '12.8.0',
    nativeDriver: '570.86.10',
    forwardCompatibleBranches: R470_TO_R545,
    minComputeCapability: '7.5',
    tensorrt: '10.8.0.43',
    python: '3.12',
    ubuntu: '24.04',
    sources: [
      {
        fact:
          'Ubuntu 24.04 with Python 3.12; TensorRT 10.8.0.43; CUDA 12.8.0.038; drivers 470.57+, 525.85+, 535.86+, 545.23+; ' +
          'compute capability 7.5 and later',
        url: `${SERVER}/23b9c72e89967d1af7a67284a00601ee35f81d11/docs/introduction/release_notes.md#L48-L115`,
        read: READ,
      },
      {
        fact: 'CUDA 12.8.0.038 with driver 570.86.10 (25.01 vllm-python-py3 row)',
        url: `${COMPATIBILITY_MATRIX}#L92`,
        read: READ,
      },
    ],
  },
];

const BY_VERSION = new Map(RELEASES.map((r) => [r.version, r]));

/** The facts of Triton release `version` (`YY.MM`), or undefined when the catalog does not record it. */
export function tritonRelease(version: string): TritonRelease | undefined {
  return BY_VERSION.get(version);
}

/** Every release the catalog records, oldest first. */
export function tritonReleases(): readonly TritonRelease[] {
  return RELEASES;
}

/**
 * The lowest CUDA compute capability Triton `version` supports, for any `YY.MM` release, recorded or not: every release
 * note up to 24.12 says "supports CUDA compute capability 6.0 and later" (rel-20-09, rel-24-10, 24.12's notes), and
 * from 25.01 on "7.5 and later" (25.01's notes line 115, rel-26-04, rel-26-09). So K80 (3.7, p2) runs no release and
 * V100 (7.0, p3) none from 25.01 on. Throws on a version that is not `YY.MM`.
 */
export function tritonMinComputeCapability(version: string): string {
  if (!isTritonVersion(version)) throw new Error(`Triton version '${version}' is not of the form YY.MM.`);
  return tritonRelease(version)?.minComputeCapability ?? (version >= '25.01' ? '7.5' : '6.0');
}

/**
 * The Python of Triton `version`'s image (`major.minor`), for any `YY.MM` release, recorded or not: the python backend's
 * stub runs model.py with it, so model.py must be valid syntax for it. Recorded releases give their own; otherwise, from
 * the Ubuntu the release is built on:
 * - 24.11 on: Ubuntu 24.04, Python 3.12 (triton-inference-server/server build.py:1638 at v2.52.0, the 24.11 release,
 *   `base_image = "ubuntu:24.04"`; docs/introduction/compatibility.md:94 at e1db8a603, "24.11 ... Python 3.12.3");
 * - 23.05 to 24.10: Ubuntu 22.04, Python 3.10 (build.py:1307 at v2.34.0, 23.05, and :1578 at v2.51.0, 24.10,
 *   `base_image = "ubuntu:22.04"`; compatibility.md:95-101, "24.04 ... 24.10 ... Python 3.10.12");
 * - before 23.05: Ubuntu 20.04, Python 3.8 (build.py:1304 at v2.33.0, 23.04, `base_image = 'ubuntu:20.04'`).
 * Throws on a version that is not `YY.MM`.
 */
export function tritonPythonVersion(version: string): string {
  if (!isTritonVersion(version)) throw new Error(`Triton version '${version}' is not of the form YY.MM.`);
  return tritonRelease(version)?.python ?? (version >= '24.11' ? '3.12' : version >= '23.05' ? '3.10' : '3.8');
}

/** Whether compute capability `capability` (e.g. `7.5`) is at least `minimum`. */
export function meetsComputeCapability(capability: string, minimum: string): boolean {
  return compareVersions(capability, minimum) >= 0;
}

/** How a driver runs a release's CUDA: natively, through forward compatibility (data-center GPUs only), or not at all. */
export type DriverSupport = 'native' | 'forward-compatibility' | 'unsupported';

/** How driver `driverVersion` (e.g. `470.256.02`, or a bare branch such as `470`) runs `release`. */
export function driverSupport(release: TritonRelease, driverVersion: string): DriverSupport {
  if (compareVersions(driverVersion, release.nativeDriver) >= 0) return 'native';
  const branch = Number(driverVersion.split('.')[0]);
  const listed = release.forwardCompatibleBranches.find((b) => b.branch === branch);
  // A bare branch (`470`) stands for "some driver of that branch": SageMaker does not say which one it installs.
  if (listed && (!driverVersion.includes('.') || compareVersions(driverVersion, listed.minimum) >= 0)) return 'forward-compatibility';
  return 'unsupported';
}

/** Compares dotted numeric versions (`12.6.1` vs `12.10`), missing parts counting as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}
