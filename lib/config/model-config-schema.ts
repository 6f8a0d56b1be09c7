// The complete Triton ModelConfig schema (triton-inference-server/common:protobuf/model_config.proto @ 83adf7c) as
// zod schemas: the one source of the parsed config's types and
// of the descriptor that drives the config.pbtxt parser (`npm run generate` writes model-config.descriptor.ts).
//
// Conventions: field names are the protobuf names as written in config.pbtxt; every field is optional (a field not
// written is absent); int64/uint64 are `bigint`; enums are their value names; maps are records. `meta({ message })`
// names each message, `meta({ oneof })` marks oneof members, `meta({ mapKey })` gives a map's protobuf key type.

import { z } from 'zod';

const int32 = () => z.int32().optional();
const uint32 = () => z.uint32().optional();
const int64 = () => z.int64().optional();
const uint64 = () => z.uint64().optional();
/** Protobuf floats hold inf and nan, which z.number() rejects: a number of any value, marked with its width. */
const floatValue = (scalar: 'float' | 'double') => z.custom<number>((v) => typeof v === 'number').meta({ scalar });
const float = () => floatValue('float').optional();
const bool = () => z.boolean().optional();
const string = () => z.string().optional();
const repeated = <T extends z.ZodType>(element: T) => z.array(element).optional();
const map = <T extends z.ZodType>(value: T, mapKey: 'string' | 'uint64' = 'string') =>
  z.record(z.string(), value).optional().meta({ mapKey });
const oneof = <T extends z.ZodType>(schema: T, group: string) => schema.optional().meta({ oneof: group });
const message = <T extends z.ZodRawShape>(name: string, shape: T) => z.object(shape).strict().meta({ message: name });

export const DATA_TYPES = [
  'TYPE_INVALID',
  'TYPE_BOOL',
  'TYPE_UINT8',
  'TYPE_UINT16',
  'TYPE_UINT32',
  'TYPE_UINT64',
  'TYPE_INT8',
  'TYPE_INT16',
  'TYPE_INT32',
  'TYPE_INT64',
  'TYPE_FP16',
  'TYPE_FP32',
  'TYPE_FP64',
  'TYPE_STRING',
  'TYPE_BF16',
] as const;
/** Enum values are listed in number order (0, 1, 2, ...): every enum of model_config.proto is dense from 0. */
export const DataType = z.enum(DATA_TYPES).meta({ enum: 'DataType' });

const Kind = z.enum(['KIND_AUTO', 'KIND_GPU', 'KIND_CPU', 'KIND_MODEL']).meta({ enum: 'ModelInstanceGroup.Kind' });
const SecondaryDeviceKind = z
  .enum(['KIND_NVDLA'])
  .meta({ enum: 'ModelInstanceGroup.SecondaryDevice.SecondaryDeviceKind' });
const Format = z.enum(['FORMAT_NONE', 'FORMAT_NHWC', 'FORMAT_NCHW']).meta({ enum: 'ModelInput.Format' });
const BatchInputKind = z
  .enum([
    'BATCH_ELEMENT_COUNT',
    'BATCH_ACCUMULATED_ELEMENT_COUNT',
    'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO',
    'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE',
    'BATCH_ITEM_SHAPE',
    'BATCH_ITEM_SHAPE_FLATTEN',
  ])
  .meta({ enum: 'BatchInput.Kind' });
const BatchOutputKind = z.enum(['BATCH_SCATTER_WITH_INPUT_SHAPE']).meta({ enum: 'BatchOutput.Kind' });
const ModelPriority = z
  .enum(['PRIORITY_DEFAULT', 'PRIORITY_MAX', 'PRIORITY_MIN'])
  .meta({ enum: 'ModelOptimizationPolicy.ModelPriority' });
const TimeoutAction = z.enum(['REJECT', 'DELAY']).meta({ enum: 'ModelQueuePolicy.TimeoutAction' });
const ControlKind = z
  .enum(['CONTROL_SEQUENCE_START', 'CONTROL_SEQUENCE_READY', 'CONTROL_SEQUENCE_END', 'CONTROL_SEQUENCE_CORRID'])
  .meta({ enum: 'ModelSequenceBatching.Control.Kind' });

export const ModelRateLimiterResource = message('ModelRateLimiter.Resource', {
  name: string(),
  global: bool(),
  count: uint32(),
});
export const ModelRateLimiter = message('ModelRateLimiter', {
  resources: repeated(ModelRateLimiterResource),
  priority: uint32(),
});
export const SecondaryDevice = message('ModelInstanceGroup.SecondaryDevice', {
  kind: SecondaryDeviceKind.optional(),
  device_id: int64(),
});
export const ModelInstanceGroup = message('ModelInstanceGroup', {
  name: string(),
  kind: Kind.optional(),
  count: int32(),
  rate_limiter: ModelRateLimiter.optional(),
  gpus: repeated(z.int32()),
  secondary_devices: repeated(SecondaryDevice),
  profile: repeated(z.string()),
  passive: bool(),
  host_policy: string(),
});
export const ModelTensorReshape = message('ModelTensorReshape', { shape: repeated(z.int64()) });
export const ModelInput = message('ModelInput', {
  name: string(),
  data_type: DataType.optional(),
  format: Format.optional(),
  dims: repeated(z.int64()),
  reshape: ModelTensorReshape.optional(),
  is_shape_tensor: bool(),
  allow_ragged_batch: bool(),
  optional: bool(),
  is_non_linear_format_io: bool(),
});
export const ModelOutput = message('ModelOutput', {
  name: string(),
  data_type: DataType.optional(),
  dims: repeated(z.int64()),
  reshape: ModelTensorReshape.optional(),
  label_filename: string(),
  is_shape_tensor: bool(),
  is_non_linear_format_io: bool(),
});
export const BatchInput = message('BatchInput', {
  kind: BatchInputKind.optional(),
  target_name: repeated(z.string()),
  data_type: DataType.optional(),
  source_input: repeated(z.string()),
});
export const BatchOutput = message('BatchOutput', {
  target_name: repeated(z.string()),
  kind: BatchOutputKind.optional(),
  source_input: repeated(z.string()),
});
export const ModelVersionPolicy = message('ModelVersionPolicy', {
  latest: oneof(message('ModelVersionPolicy.Latest', { num_versions: uint32() }), 'policy_choice'),
  all: oneof(message('ModelVersionPolicy.All', {}), 'policy_choice'),
  specific: oneof(message('ModelVersionPolicy.Specific', { versions: repeated(z.int64()) }), 'policy_choice'),
});

const GraphShape = message('ModelOptimizationPolicy.Cuda.GraphSpec.Shape', { dim: repeated(z.int64()) });
const GraphSpec = message('ModelOptimizationPolicy.Cuda.GraphSpec', {
  batch_size: int32(),
  input: map(GraphShape),
  graph_lower_bound: message('ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound', {
    batch_size: int32(),
    input: map(GraphShape),
  }).optional(),
});
const Accelerator = message('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator', {
  name: string(),
  parameters: map(z.string()),
});
const PinnedMemoryBuffer = message('ModelOptimizationPolicy.PinnedMemoryBuffer', { enable: bool() });
export const ModelOptimizationPolicy = message('ModelOptimizationPolicy', {
  graph: message('ModelOptimizationPolicy.Graph', { level: int32() }).optional(),
  priority: ModelPriority.optional(),
  cuda: message('ModelOptimizationPolicy.Cuda', {
    graphs: bool(),
    busy_wait_events: bool(),
    graph_spec: repeated(GraphSpec),
    output_copy_stream: bool(),
  }).optional(),
  execution_accelerators: message('ModelOptimizationPolicy.ExecutionAccelerators', {
    gpu_execution_accelerator: repeated(Accelerator),
    cpu_execution_accelerator: repeated(Accelerator),
  }).optional(),
  input_pinned_memory: PinnedMemoryBuffer.optional(),
  output_pinned_memory: PinnedMemoryBuffer.optional(),
  gather_kernel_buffer_threshold: uint32(),
  eager_batching: bool(),
});
export const ModelQueuePolicy = message('ModelQueuePolicy', {
  timeout_action: TimeoutAction.optional(),
  default_timeout_microseconds: uint64(),
  allow_timeout_override: bool(),
  max_queue_size: uint32(),
});
export const ModelDynamicBatching = message('ModelDynamicBatching', {
  preferred_batch_size: repeated(z.int32()),
  max_queue_delay_microseconds: uint64(),
  preserve_ordering: bool(),
  priority_levels: uint64(),
  default_priority_level: uint64(),
  default_queue_policy: ModelQueuePolicy.optional(),
  priority_queue_policy: map(ModelQueuePolicy, 'uint64'),
});
export const SequenceControl = message('ModelSequenceBatching.Control', {
  kind: ControlKind.optional(),
  int32_false_true: repeated(z.int32()),
  fp32_false_true: repeated(floatValue('float')),
  bool_false_true: repeated(z.boolean()),
  data_type: DataType.optional(),
});
export const SequenceInitialState = message('ModelSequenceBatching.InitialState', {
  data_type: DataType.optional(),
  dims: repeated(z.int64()),
  zero_data: oneof(z.boolean(), 'state_data'),
  data_file: oneof(z.string(), 'state_data'),
  name: string(),
});
export const SequenceState = message('ModelSequenceBatching.State', {
  input_name: string(),
  output_name: string(),
  data_type: DataType.optional(),
  dims: repeated(z.int64()),
  initial_state: repeated(SequenceInitialState),
  use_same_buffer_for_input_output: bool(),
  use_growable_memory: bool(),
});
export const ModelSequenceBatching = message('ModelSequenceBatching', {
  direct: oneof(
    message('ModelSequenceBatching.StrategyDirect', {
      max_queue_delay_microseconds: uint64(),
      minimum_slot_utilization: float(),
    }),
    'strategy_choice',
  ),
  oldest: oneof(
    message('ModelSequenceBatching.StrategyOldest', {
      max_candidate_sequences: int32(),
      preferred_batch_size: repeated(z.int32()),
      max_queue_delay_microseconds: uint64(),
      preserve_ordering: bool(),
    }),
    'strategy_choice',
  ),
  max_sequence_idle_microseconds: uint64(),
  control_input: repeated(
    message('ModelSequenceBatching.ControlInput', { name: string(), control: repeated(SequenceControl) }),
  ),
  state: repeated(SequenceState),
  iterative_sequence: bool(),
});
export const EnsembleStep = message('ModelEnsembling.Step', {
  model_name: string(),
  model_version: int64(),
  input_map: map(z.string()),
  output_map: map(z.string()),
  model_namespace: string(),
});
export const ModelEnsembling = message('ModelEnsembling', {
  step: repeated(EnsembleStep),
  max_inflight_requests: uint32(),
});
export const ModelParameter = message('ModelParameter', { string_value: string() });
export const ModelWarmupInput = message('ModelWarmup.Input', {
  data_type: DataType.optional(),
  dims: repeated(z.int64()),
  zero_data: oneof(z.boolean(), 'input_data_type'),
  random_data: oneof(z.boolean(), 'input_data_type'),
  input_data_file: oneof(z.string(), 'input_data_type'),
});
export const ModelWarmup = message('ModelWarmup', {
  name: string(),
  batch_size: uint32(),
  inputs: map(ModelWarmupInput),
  count: uint32(),
});
export const ModelMetrics = message('ModelMetrics', {
  metric_control: repeated(
    message('ModelMetrics.MetricControl', {
      metric_identifier: message('ModelMetrics.MetricControl.MetricIdentifier', { family: string() }).optional(),
      histogram_options: oneof(
        message('ModelMetrics.MetricControl.HistogramOptions', { buckets: repeated(floatValue('double')) }),
        'metric_options',
      ),
    }),
  ),
});

export const ModelConfigSchema = message('ModelConfig', {
  name: string(),
  platform: string(),
  backend: string(),
  runtime: string(),
  version_policy: ModelVersionPolicy.optional(),
  max_batch_size: int32(),
  input: repeated(ModelInput),
  output: repeated(ModelOutput),
  batch_input: repeated(BatchInput),
  batch_output: repeated(BatchOutput),
  optimization: ModelOptimizationPolicy.optional(),
  dynamic_batching: oneof(ModelDynamicBatching, 'scheduling_choice'),
  sequence_batching: oneof(ModelSequenceBatching, 'scheduling_choice'),
  ensemble_scheduling: oneof(ModelEnsembling, 'scheduling_choice'),
  instance_group: repeated(ModelInstanceGroup),
  default_model_filename: string(),
  cc_model_filenames: map(z.string()),
  metric_tags: map(z.string()),
  parameters: map(ModelParameter),
  model_warmup: repeated(ModelWarmup),
  model_operations: message('ModelOperations', { op_library_filename: repeated(z.string()) }).optional(),
  model_transaction_policy: message('ModelTransactionPolicy', { decoupled: bool() }).optional(),
  model_repository_agents: message('ModelRepositoryAgents', {
    agents: repeated(message('ModelRepositoryAgents.Agent', { name: string(), parameters: map(z.string()) })),
  }).optional(),
  response_cache: message('ModelResponseCache', { enable: bool() }).optional(),
  model_metrics: ModelMetrics.optional(),
});

export type ModelConfig = z.infer<typeof ModelConfigSchema>;
export type DataTypeName = z.infer<typeof DataType>;
export type ModelInputConfig = z.infer<typeof ModelInput>;
export type ModelOutputConfig = z.infer<typeof ModelOutput>;
export type ModelInstanceGroupConfig = z.infer<typeof ModelInstanceGroup>;
export type EnsembleStepConfig = z.infer<typeof EnsembleStep>;
export type ModelSequenceBatchingConfig = z.infer<typeof ModelSequenceBatching>;
export type ModelDynamicBatchingConfig = z.infer<typeof ModelDynamicBatching>;
export type ModelWarmupConfig = z.infer<typeof ModelWarmup>;
