// Every code a validation report (`validate`, `package`, `push`'s check of an archive) can carry, by the severity it
// comes in. `--accept CODE` takes the codes that can be warnings and refuses the others by name: an error is a load
// failure, which no flag makes go away. test/repository/diagnostic-codes.test.ts keeps the table in step with the
// rules (every code the sources write beside a severity, and every code the real-world corpus and the fixtures give).
//
// Under --mme, an error in a model SageMaker never loads is reported as a warning (mme-rules.ts outsideTheLoad): its
// code stays an error code here, since the same fault is an error wherever the model is loaded.

import { closest } from '../diagnostics';

/** Codes only ever reported as warnings. */
const WARNINGS: readonly string[] = [
  'cc-model-file-missing', 'dali-pipeline-unread', 'duplicate-config', 'duplicate-input', 'duplicate-map-key', 'duplicate-output',
  'ensemble-step-unchecked',
  'hidden-first-subdir', 'hidden-model-directory', 'metric-family-not-customizable', 'mme-execution-env-empty', 'mme-execution-env-path',
  'mme-large-execution-env', 'mme-many-models', 'mme-unused-model', 'model-file-empty', 'python-auto-complete-unchecked', 'python-import',
  'python-model-execute', 'pytorch-forward-unread', 'pytorch-input-index', 'pytorch-input-order', 'state-duplicate-output',
  'state-growable-memory-gpu', 'tensorflow-signature-unknown', 'tensorrt-plan-target', 'unknown-backend-library', 'unknown-enum-number',
  'version-leading-zeros', 'version-not-numeric', 'version-numeric-prefix',
];

/** Codes reported as a warning or an error, depending on what the files can decide (a backend that may auto-complete...). */
const EITHER: readonly string[] = [
  'config-missing', 'ensemble-unknown-input', 'ensemble-unknown-output', 'input-missing-data-type', 'input-missing-dims',
  'instance-group-gpu-id', 'missing-inputs', 'missing-outputs', 'output-missing-data-type', 'output-missing-dims', 'python-model-class',
  'state-duplicate-input', 'version-missing',
];

/** Codes only ever reported as errors. */
const ERRORS: readonly string[] = [
  'batch-input-data-type', 'batch-input-sources', 'batch-input-unknown-source', 'batch-output-duplicate-target', 'batch-output-sources',
  'batch-output-unknown-source', 'batch-output-unknown-target', 'batch-strategy-escapes', 'batch-strategy-missing',
  'batch-strategy-with-sequence', 'byte-order-mark', 'dali-data-type', 'dali-dims', 'dali-missing-data-type',
  'dali-output-count', 'dali-pipeline-invalid', 'dali-unknown-input', 'config-not-a-file', 'config-too-large', 'decoupled-response-cache',
  'default-priority-level-range', 'duplicate-field', 'element-count-overflow', 'empty-repository', 'empty-reshape', 'ensemble-backend',
  'ensemble-cycle', 'ensemble-dtype-mismatch', 'ensemble-input-not-mapped', 'ensemble-input-unused', 'ensemble-instance-group',
  'ensemble-invalid-model', 'ensemble-max-batch-size', 'ensemble-missing-model', 'ensemble-missing-scheduling',
  'ensemble-mixed-decoupled-inputs', 'ensemble-model-no-version', 'ensemble-model-version-not-loaded', 'ensemble-model-warmup',
  'ensemble-no-step', 'ensemble-optimization', 'ensemble-output-not-written', 'ensemble-output-unused',
  'ensemble-outputs-into-one-tensor', 'ensemble-scheduling-not-ensemble', 'ensemble-shape-mismatch', 'ensemble-step-input-map',
  'ensemble-step-model-name', 'ensemble-step-output-map', 'ensemble-tensor-unused', 'ensemble-tensor-written-twice',
  'execution-env-missing', 'execution-env-outside', 'force-cpu-only-value', 'format-dims', 'hardlink-outside', 'initial-state-count',
  'initial-state-data', 'initial-state-data-type', 'initial-state-dim-mismatch', 'initial-state-dims', 'initial-state-file-missing',
  'initial-state-file-short', 'initial-state-name', 'initial-state-variable-dims', 'input-missing-name', 'instance-group-cpu-gpus',
  'instance-group-model-gpus', 'instance-group-profile', 'instance-group-profile-platform', 'integer-out-of-range', 'invalid-dims',
  'invalid-reshape', 'invalid-utf8', 'label-file-missing', 'label-file-outside', 'metric-buckets-missing', 'metric-family-missing',
  'metric-histogram-missing', 'metric-identifier-missing', 'mme-ambiguous-ensemble', 'mme-decoupled', 'mme-ensemble-not-detected',
  'mme-execution-env-activate', 'mme-execution-env-format', 'mme-multiple-ensembles', 'mme-no-ensemble', 'mme-target-model-name',
  'model-file-missing', 'model-file-not-a-directory', 'model-file-not-a-file', 'name-mismatch', 'name-not-utf8',
  'negative-max-batch-size', 'no-version', 'non-linear-io-dims', 'non-linear-io-platform', 'not-a-directory', 'oneof-conflict',
  'onnx-autofill-batching', 'onnx-batch-dim', 'onnx-dims', 'onnx-external-data-missing', 'onnx-input-count', 'onnx-invalid',
  'onnx-non-tensor-io', 'onnx-optional-input-batching', 'onnx-ragged-input', 'onnx-scalar-dims', 'onnx-sequence-control-dims',
  'onnx-sequence-control-missing', 'onnx-sequence-control-type', 'onnx-unknown-input', 'onnx-unknown-output', 'openvino-batch-dim',
  'openvino-bin-missing', 'openvino-dims', 'openvino-input-count', 'openvino-invalid', 'openvino-unknown-input',
  'openvino-unknown-output', 'openvino-unnamed-tensor', 'openvino-unsupported-data-type', 'output-missing-name',
  'platform-backend-mismatch', 'preferred-batch-size-not-positive', 'preferred-batch-size-too-large', 'preserve-ordering-delay',
  'preserve-ordering-priorities', 'priority-queue-policy-range', 'python-auto-complete', 'python-model-extension', 'python-syntax',
  'pytorch-forward-argument-type', 'pytorch-forward-dict', 'pytorch-input-count', 'pytorch-invalid', 'rate-limiter-resource-scope',
  'reshape-mismatch', 'runtime-escapes', 'sequence-control-duplicate', 'sequence-control-kind-duplicate', 'sequence-control-list-length',
  'sequence-control-list-missing', 'sequence-control-list-multiple', 'sequence-control-name', 'sequence-corrid-data-type',
  'sequence-corrid-list', 'sequence-preferred-batch-size', 'sequence-response-cache', 'sequence-slot-utilization',
  'shape-tensor-platform', 'special-file', 'state-growable-memory', 'stray-directory', 'symlink-dangling', 'symlink-escape',
  'symlink-loop', 'syntax-error', 'tensorflow-autofill-batching', 'tensorflow-autofill-contradiction', 'tensorflow-autofill-rank',
  'tensorflow-dims', 'tensorflow-empty-network', 'tensorflow-graphdef-invalid', 'tensorflow-input-count', 'tensorflow-ragged-input',
  'tensorflow-savedmodel-invalid', 'tensorflow-savedmodel-signature', 'tensorflow-savedmodel-tag', 'tensorflow-sequence-control-dims',
  'tensorflow-sequence-control-missing', 'tensorflow-sequence-control-type', 'tensorflow-unknown-input', 'tensorflow-unknown-output',
  'tensorflow-unsupported-dtype', 'tensorrt-string', 'unknown-backend', 'unknown-enum-value', 'unknown-field', 'unknown-platform',
  'unsafe-name', 'warmup-file-missing', 'warmup-file-short', 'warmup-no-data', 'warmup-variable-dims', 'wrong-value-type',
];

export type CodeSeverity = 'warning' | 'error' | 'either';

const SEVERITY_OF: ReadonlyMap<string, CodeSeverity> = new Map([
  ...WARNINGS.map((c) => [c, 'warning'] as const),
  ...EITHER.map((c) => [c, 'either'] as const),
  ...ERRORS.map((c) => [c, 'error'] as const),
]);

/** The severities `code` comes in, or undefined for a code no rule reports. */
export function diagnosticCodeSeverity(code: string): CodeSeverity | undefined {
  return SEVERITY_OF.get(code);
}

/** Every known code, sorted. */
export function diagnosticCodes(): string[] {
  return [...SEVERITY_OF.keys()].sort();
}

/**
 * Why `code` cannot be accepted as a warning, or undefined when it can: a sentence naming it, with the nearest known
 * warning code for a misspelt one.
 */
export function unacceptableCode(code: string): string | undefined {
  const severity = diagnosticCodeSeverity(code);
  if (severity === 'warning' || severity === 'either') return undefined;
  if (severity === 'error') {
    return `${code} is an error code: an error is a load failure and cannot be accepted; fix it (only warnings can be accepted).`;
  }
  const near = closest(code, [...WARNINGS, ...EITHER]);
  return `${code} is not a warning code mme-deploy reports${near ? ` (did you mean ${near}?)` : ''}.`;
}
