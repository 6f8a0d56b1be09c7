// TensorRT plans in an MME archive: one warning per plan naming the compute capability and TensorRT version its
// engine must be built for (the target instance's GPU, the serving image's TensorRT).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateRepository } from '../../lib/repository/validate';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'mme-trt-'));
  mkdirSync(join(root, 'resnet', '1'), { recursive: true });
  writeFileSync(join(root, 'resnet', 'config.pbtxt'), 'name: "resnet"\nplatform: "tensorrt_plan"\nmax_batch_size: 8\n');
  writeFileSync(join(root, 'resnet', '1', 'model.plan'), 'engine');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('TensorRT plans and the target endpoint', () => {
  it('warns, at the platform line, that the plan must be built for the T4 of ml.g4dn with Triton 24.09\'s TensorRT', async () => {
    const report = await validateRepository(join(root, 'resnet'), { mme: true, targetModel: 'resnet.tar.gz' });
    const warnings = report.diagnostics.filter((d) => d.code === 'tensorrt-plan-target');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ severity: 'warning', file: 'config.pbtxt', line: 2, model: 'resnet' });
    expect(warnings[0]!.message).toContain('compute capability 7.5 (the NVIDIA T4 of ml.g4dn.xlarge)');
    expect(warnings[0]!.message).toContain("TensorRT 10.4.0.26, the version in Triton 24.09's image");
    expect(report.ok).toBe(true);
  });

  it('names the target given: another instance type and Triton release', async () => {
    const report = await validateRepository(join(root, 'resnet'), {
      mme: true,
      target: { instanceType: 'ml.g5.xlarge', tritonVersion: '25.01' },
    });
    const message = report.diagnostics.find((d) => d.code === 'tensorrt-plan-target')!.message;
    expect(message).toContain('compute capability 8.6 (the NVIDIA A10G of ml.g5.xlarge)');
    expect(message).toContain('TensorRT 10.8.0.43');
  });

  it('says nothing outside an MME archive, where no endpoint is known, nor for other platforms', async () => {
    const plain = await validateRepository(join(root, 'resnet'));
    expect(plain.diagnostics.some((d) => d.code === 'tensorrt-plan-target')).toBe(false);
    writeFileSync(join(root, 'resnet', 'config.pbtxt'), 'name: "resnet"\nbackend: "onnxruntime"\nmax_batch_size: 8\n');
    const onnx = await validateRepository(join(root, 'resnet'), { mme: true });
    expect(onnx.diagnostics.some((d) => d.code === 'tensorrt-plan-target')).toBe(false);
  });
});
