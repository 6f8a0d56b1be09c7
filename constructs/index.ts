// Public surface of mme-deploy's CDK constructs.

// First: an aws-cdk-lib below the floor stops here with one line naming the floor.
export { AWS_CDK_LIB_FLOOR } from './aws-cdk-lib-floor';

export * from './triton-image';
export * from './triton-environment';
export * from './instance-type';
export * from './endpoint-deployment';
export * from './triton-multi-model-endpoint';
export * from './scaling-guard';
export * from './scalable-instance-count';
export * from './multi-model-endpoint-dashboard';
export * from './archive-retention';
export * from './model-archive';
export * from './triton-mme-stack';
export { APP_CONTEXT_KEYS, readAppContext } from './app-context';
export type { AppContextKey, AppSettings } from './app-context';
