import { daliGpuOperators, readDaliPipeline } from '../../lib/model-files/dali';
import type { ByteSource } from '../../lib/model-files/protobuf-wire';
import { suiteFor } from '../tools';
import { daliPipelineBytes } from './dali-writer';

function source(bytes: Buffer): ByteSource {
  return { size: bytes.length, read: (buffer, length, position) => bytes.copy(buffer, 0, position, position + length) };
}

suiteFor({ tools: ['protoc'] })('reading a serialized DALI pipeline', () => {
  const protoc = 'protoc';

  it('names the operators that run on the GPU: "mixed" decoders and "gpu" operators', () => {
    const bytes = daliPipelineBytes(
      [
        { name: 'ExternalSource', device: 'cpu', outputs: ['cpu'] },
        { name: 'decoders__Image', device: 'mixed', outputs: ['gpu'] },
        { name: 'Resize', device: 'gpu', outputs: ['gpu'] },
      ],
      protoc,
    );
    const read = readDaliPipeline(source(bytes));
    if (!read.ok) throw new Error(read.reason);
    expect(read.pipeline.operators.map((op) => `${op.name}:${op.device}`)).toEqual([
      'ExternalSource:cpu',
      'decoders__Image:mixed',
      'Resize:gpu',
    ]);
    expect(read.pipeline.outputDevices).toEqual(['gpu']);
    expect(daliGpuOperators(read.pipeline).map((op) => op.name)).toEqual(['decoders__Image', 'Resize']);
  });

  it('finds no GPU operator in a CPU pipeline', () => {
    const bytes = daliPipelineBytes(
      [
        { name: 'ExternalSource', device: 'cpu', outputs: ['cpu'] },
        { name: 'decoders__Image', device: 'cpu', outputs: ['cpu'] },
      ],
      protoc,
    );
    const read = readDaliPipeline(source(bytes));
    if (!read.ok) throw new Error(read.reason);
    expect(daliGpuOperators(read.pipeline)).toEqual([]);
  });

  it('takes an operator without a device argument for a GPU one when an output is on the GPU', () => {
    const read = readDaliPipeline(source(daliPipelineBytes([{ name: 'Copy', outputs: ['gpu'] }], protoc)));
    if (!read.ok) throw new Error(read.reason);
    expect(read.pipeline.operators).toEqual([{ name: 'Copy', device: 'gpu' }]);
  });

  it('says a Python pipeline, an empty file and a truncated pipeline are not serialized pipelines', () => {
    const python = Buffer.from('import nvidia.dali as dali\n@dali.pipeline_def\ndef pipe():\n    return dali.fn.external_source()\n');
    expect(readDaliPipeline(source(python))).toMatchObject({ ok: false, reason: expect.stringMatching(/not a serialized DALI pipeline/) });
    expect(readDaliPipeline(source(Buffer.alloc(0)))).toEqual({ ok: false, reason: 'is empty' });
    const whole = daliPipelineBytes([{ name: 'Resize', device: 'gpu', outputs: ['gpu'] }], protoc);
    expect(readDaliPipeline(source(whole.subarray(0, whole.length - 5)))).toMatchObject({ ok: false });
  });
});
