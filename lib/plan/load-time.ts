// How long a cold model takes to become ready on an MME instance, estimated from its sizes. The parameters are
// assumptions, printed with every plan and overridable (`--cold-start`), because they vary with region, instance
// network, archive compression and backend; measure yours with CloudWatch ModelDownloadingTime / ModelLoadingTime.

export interface ColdStartParameters {
  /** S3 to instance disk, MB/s of archive (compressed) bytes. */
  readonly downloadMBps: number;
  /** gunzip + untar to disk, MB/s of extracted bytes. */
  readonly extractMBps: number;
  /** Disk into GPU memory, MB/s of estimated GPU bytes (deserialising, building engines, copying to the device). */
  readonly loadMBps: number;
  /** Fixed seconds per Triton model loaded (backend and instance start-up, Python stub process). */
  readonly perModelSeconds: number;
}

/** 1 MB = 10^6 bytes, as throughput is usually quoted. */
export const DEFAULT_COLD_START: ColdStartParameters = {
  downloadMBps: 100,
  extractMBps: 150,
  loadMBps: 500,
  perModelSeconds: 1,
};

export interface ColdStartSizes {
  readonly archiveBytes: number;
  readonly extractedBytes: number;
  readonly gpuBytes: number;
  /** Triton models the archive loads, not counting an ensemble itself (its steps count). */
  readonly tritonModels: number;
  /** Conda-pack environments (EXECUTION_ENV_PATH) that the Python backend unpacks on every load, bytes. */
  readonly pythonEnvBytes: number;
}

export interface ColdStartEstimate {
  readonly downloadSeconds: number;
  readonly extractSeconds: number;
  readonly loadSeconds: number;
  /** Not on the instance's disk: download + extract + load. */
  readonly fromS3Seconds: number;
  /** Still on the instance's disk after an eviction from GPU memory: load only. */
  readonly fromDiskSeconds: number;
}

export function estimateColdStart(sizes: ColdStartSizes, p: ColdStartParameters): ColdStartEstimate {
  const downloadSeconds = sizes.archiveBytes / (p.downloadMBps * 1e6);
  const extractSeconds = sizes.extractedBytes / (p.extractMBps * 1e6);
  const loadSeconds =
    sizes.gpuBytes / (p.loadMBps * 1e6) +
    sizes.pythonEnvBytes / (p.extractMBps * 1e6) +
    sizes.tritonModels * p.perModelSeconds;
  return {
    downloadSeconds,
    extractSeconds,
    loadSeconds,
    fromS3Seconds: downloadSeconds + extractSeconds + loadSeconds,
    fromDiskSeconds: loadSeconds,
  };
}

/** Parses `download=100,extract=150,load=500,per-model=1` (any subset) over the defaults. */
export function parseColdStartParameters(
  text: string,
  base: ColdStartParameters = DEFAULT_COLD_START,
): ColdStartParameters | { error: string } {
  const keys: Record<string, keyof ColdStartParameters> = {
    download: 'downloadMBps',
    extract: 'extractMBps',
    load: 'loadMBps',
    'per-model': 'perModelSeconds',
  };
  const result: { -readonly [K in keyof ColdStartParameters]: number } = { ...base };
  for (const part of text.split(',')) {
    const [key, value, extra] = part.split('=').map((s) => s.trim());
    const field = key === undefined ? undefined : keys[key];
    const number = Number(value);
    if (!field || value === undefined || value === '' || extra !== undefined) {
      return {
        error: `--cold-start: \`${part}\` is not one of download=MB/s, extract=MB/s, load=MB/s, per-model=seconds`,
      };
    }
    if (!Number.isFinite(number) || number < 0 || (field !== 'perModelSeconds' && number === 0)) {
      return { error: `--cold-start: ${key} must be a positive number, found \`${value}\`` };
    }
    result[field] = number;
  }
  return result;
}
