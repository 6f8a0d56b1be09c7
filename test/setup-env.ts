// Test-wide environment: skip aws-cdk-lib's per-template schema validation (about 3 s per synth) and keep
// every AWS SDK client away from real credentials and regions. (The python3 the tests' CLIs run, MME_DEPLOY_PYTHON, is
// set by test/global-setup.ts, for the processes tests start too.)
process.env.CDK_VALIDATION = 'false';
process.env.AWS_ACCESS_KEY_ID ??= 'test-access-key';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test-secret-key';
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// Constructs record no creation stack (aws:cdk:disable-creation-stack-traces, which every App reads from
// CDK_CONTEXT_JSON): metadata that no template holds and no test reads, and under jest every stack trace is mapped
// through the source maps, 20-30 % of building and synthesizing a stack.
process.env.CDK_CONTEXT_JSON ??= JSON.stringify({ 'aws:cdk:disable-creation-stack-traces': true });
