// The library's public API: what the CLI, the CDK constructs and other tools build on.

export type { Diagnostic, Note, Severity } from './diagnostics';
export { countSummary, formatDiagnostic, hasErrors } from './diagnostics';
export type { ModelConfig } from './config/model-config-schema';
/** The zod schema of ModelConfig, for runtime checks of configs built in code (loads zod). */
export { ModelConfigSchema } from './config/model-config-schema';
export { ConfigPositions, parseModelConfig } from './config/parse';
export type { ParseOptions, ParseResult } from './config/parse';
export { configToJson } from './config/print';
export { loadRepository, RepositoryAccessError, validateRepository } from './repository/validate';
export type { ModelSummary, ValidateOptions, ValidationReport } from './repository/validate';
export { buildEnsembleGraph, checkEnsembles, topLevelEnsembles } from './repository/ensemble-graph';
export { renderDot, renderMermaid } from './repository/graph-render';
export { defaultTargetModel, SAGEMAKER_ENSEMBLE_PATTERN, targetModelProblems } from './repository/mme-rules';
export { packRepository } from './bundle/pack-repository';
export type { PackManifest, PackOptions, PackResult } from './bundle/pack-repository';
export { pushTargetModel } from './push/push-target-model';
export type { PushResult, PushStart, PushTargetModelOptions } from './push/push-target-model';
export { extractTarGz, readTarGz, writeStreamAtomically } from './archive';
export { ERROR_CODES, isMmeError, MmeError } from './errors';
export type { ErrorCode } from './errors';
export { diagnostic } from './diagnostics';
export type { DiagnosticSource, SourcePosition } from './diagnostics';
export { EndpointLogParser, parseEndpointLog } from './logs/endpoint-log-parser';
export type { DrainOptions, ParserOptions } from './logs/endpoint-log-parser';
export type { KnownFailure, LogEvent, LogEventKind, LogRecord } from './logs/log-event';
export { failuresByModel } from './logs/failure-summary';
export type { ModelFailures } from './logs/failure-summary';
export { archiveBaseName, parseVersionedTargetModel, versionedKeyPattern, versionedTargetModel } from './bundle/target-model-name';
