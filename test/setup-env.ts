// Test-wide environment: skip aws-cdk-lib's per-template schema validation (about 3 s per synth) and keep
// every AWS SDK client away from real credentials and regions.
process.env.CDK_VALIDATION = 'false';
process.env.AWS_ACCESS_KEY_ID ??= 'test-access-key';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test-secret-key';
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

// `--run-python` runs python3 once per model: give it the interpreter the global setup resolved (test/tools.ts), not a
// version manager's shim that costs a second per start. A developer's own MME_DEPLOY_PYTHON wins.
const tools = process.env.MME_TEST_TOOLS;
if (tools && !process.env.MME_DEPLOY_PYTHON) {
  const { pythons } = JSON.parse(tools) as { pythons: Array<{ path: string; modules: string[] }> };
  const python = pythons.find((p) => p.modules.includes('numpy')) ?? pythons[0];
  if (python) process.env.MME_DEPLOY_PYTHON = python.path;
}
