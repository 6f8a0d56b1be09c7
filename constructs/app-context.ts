// Reads the `cdk deploy -c key=value` context of bin/app.ts into TritonMmeStack properties. Context from the command
// line is always a string, from cdk.json any JSON value: both are accepted.

import type { Node } from 'constructs';
import { DEFAULT_TRITON_VERSION } from '../lib/catalog/triton-images';
import { closest } from '../lib/diagnostics/did-you-mean';
import { InstanceType } from './instance-type';
import { TritonImage } from './triton-image';
import type { TritonMmeStackProps } from './triton-mme-stack';

/** Every context key the app reads, with what it means (docs/cdk.md repeats this table). */
export const APP_CONTEXT_KEYS = {
  stackName: 'stack name (default TritonMme)',
  region: 'deploy region; unset = environment-agnostic template (the image account comes from a CfnMapping)',
  instanceType: 'single-GPU instance type (default ml.g4dn.xlarge)',
  initialInstanceCount: 'instances at creation (default 1)',
  minCapacity: 'autoscaling minimum (default 1)',
  maxCapacity: 'autoscaling maximum (default 5)',
  gpuTarget: 'target average GPUUtilization in percent (default 60)',
  tritonVersion: `SageMaker Triton image version YY.MM (default ${DEFAULT_TRITON_VERSION})`,
  imageAsset: 'build the image from a Dockerfile directory instead ("default" = this project\'s triton-image/)',
  ecrRepository: 'use an image from this ECR repository of the account instead',
  imageTag: 'tag of the ecrRepository image (default latest)',
  modelRepositories: 'model repositories to pack and upload: JSON array or comma-separated paths ("" for none)',
  bucketName: 'existing bucket for the archives (default: a new bucket)',
  modelPrefix: 'key prefix of the archives (default models/)',
  endpointName: 'endpoint name (default generated)',
  alarmTopicArn: 'SNS topic for alarm notifications',
  nag: 'run cdk-nag AwsSolutions checks at synth (default true)',
} as const;

export type AppContextKey = keyof typeof APP_CONTEXT_KEYS;

/** What bin/app.ts needs to build the stack. */
export interface AppSettings {
  readonly stackName: string;
  readonly region?: string;
  readonly nag: boolean;
  readonly stackProps: TritonMmeStackProps;
  /** Advice for the synth output (context keys this app does not know: typos, or another tool's keys). */
  readonly warnings: string[];
}

/** Context keys the CDK CLI itself writes (besides `@aws-cdk/...` flags and `aws:cdk:...` or lookup keys). */
const CDK_OWN_KEYS = new Set(['acknowledged-issue-numbers', 'cli-telemetry']);

/** Reads and checks every key; throws once, naming every bad value. */
export function readAppContext(node: Node): AppSettings {
  const errors: string[] = [];
  const raw = (key: AppContextKey): unknown => node.tryGetContext(key);
  const text = (key: AppContextKey): string | undefined => {
    const value = raw(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') {
      errors.push(`context ${key} must be a string, got ${JSON.stringify(value)}.`);
      return undefined;
    }
    return value;
  };
  const integer = (key: AppContextKey): number | undefined => {
    const value = raw(key);
    if (value === undefined || value === null || value === '') return undefined;
    const n = typeof value === 'number' ? value : Number(value);
    if (!Number.isFinite(n)) {
      errors.push(`context ${key} must be a number, got ${JSON.stringify(value)}.`);
      return undefined;
    }
    return n;
  };
  const bool = (key: AppContextKey, fallback: boolean): boolean => {
    const value = raw(key);
    if (value === undefined || value === null || value === '') return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    errors.push(`context ${key} must be true or false, got ${JSON.stringify(value)}.`);
    return fallback;
  };
  const list = (key: AppContextKey): string[] | undefined => {
    const value = raw(key);
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
    if (typeof value === 'string') {
      const trimmed = value.trim();
      if (trimmed.startsWith('[')) {
        try {
          const parsed: unknown = JSON.parse(trimmed);
          if (Array.isArray(parsed) && parsed.every((v) => typeof v === 'string')) return parsed as string[];
        } catch {
          // reported below
        }
        errors.push(`context ${key} is not a JSON array of strings: ${trimmed}`);
        return undefined;
      }
      return trimmed === '' ? [] : trimmed.split(',').map((s) => s.trim()).filter((s) => s !== '');
    }
    errors.push(`context ${key} must be a list of paths, got ${JSON.stringify(value)}.`);
    return undefined;
  };

  const known = new Set(Object.keys(APP_CONTEXT_KEYS));
  const unknownKeys = Object.keys(node.getAllContext()).filter(
    (k) => !known.has(k) && !CDK_OWN_KEYS.has(k) && !k.includes(':') && !k.startsWith('aws-cdk') && !k.startsWith('@'),
  );
  const warnings = unknownKeys.map((k) => {
    const near = closest(k, [...known]);
    return near
      ? `context ${k} is not a key this app reads: did you mean ${near}? (-c ${near}=...)`
      : `context ${k} is not a key this app reads (a typo?); known keys: ${[...known].join(', ')}.`;
  });

  const settings = {
    stackName: text('stackName') ?? 'TritonMme',
    region: text('region'),
    nag: bool('nag', true),
    instanceType: text('instanceType'),
    initialInstanceCount: integer('initialInstanceCount'),
    minCapacity: integer('minCapacity'),
    maxCapacity: integer('maxCapacity'),
    gpuTarget: integer('gpuTarget'),
    tritonVersion: text('tritonVersion'),
    imageAsset: text('imageAsset'),
    ecrRepository: text('ecrRepository'),
    imageTag: text('imageTag'),
    modelRepositories: list('modelRepositories'),
    bucketName: text('bucketName'),
    modelPrefix: text('modelPrefix'),
    endpointName: text('endpointName'),
    alarmTopicArn: text('alarmTopicArn'),
  };
  const imageChoices = [settings.imageAsset, settings.ecrRepository].filter((x) => x !== undefined);
  if (imageChoices.length > 1) errors.push('context imageAsset and ecrRepository exclude each other; give one.');
  if (settings.imageTag && !settings.ecrRepository) errors.push('context imageTag needs ecrRepository.');
  if (settings.tritonVersion && imageChoices.length > 0) {
    errors.push('context tritonVersion chooses the SageMaker Triton image; it cannot be combined with imageAsset or ecrRepository.');
  }
  // One message naming every problem: the bad values, and the unknown keys (often the same typo's other half).
  if (errors.length > 0) {
    throw new Error(`Invalid context for the mme-deploy app:\n${[...errors, ...warnings].map((e) => `  - ${e}`).join('\n')}`);
  }

  return {
    stackName: settings.stackName,
    region: settings.region,
    nag: settings.nag,
    warnings,
    stackProps: {
      image: settings.imageAsset
        ? TritonImage.fromAsset(settings.imageAsset === 'default' ? undefined : settings.imageAsset)
        : settings.ecrRepository
          ? TritonImage.fromEcrRepositoryName(settings.ecrRepository, settings.imageTag)
          : TritonImage.fromSageMakerDlc(settings.tritonVersion),
      instanceType: settings.instanceType === undefined ? undefined : InstanceType.of(settings.instanceType),
      initialInstanceCount: settings.initialInstanceCount,
      minCapacity: settings.minCapacity,
      maxCapacity: settings.maxCapacity,
      gpuUtilizationTarget: settings.gpuTarget,
      modelBucketName: settings.bucketName,
      modelPrefix: settings.modelPrefix,
      endpointName: settings.endpointName,
      modelRepositories: settings.modelRepositories,
      alarmTopicArn: settings.alarmTopicArn,
    },
  };
}
