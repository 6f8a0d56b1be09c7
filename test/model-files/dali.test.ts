import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { daliGpuOperators, daliInputs, readDaliPipeline } from '../../lib/model-files/dali';
import type { ByteSource } from '../../lib/model-files/protobuf-wire';
import { suiteFor } from '../tools';
import { daliPipeline, daliPipelineByProtoc, daliPipelineBytes, type DaliPipelineSpec } from './dali-writer';

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
    expect(read.pipeline.operators).toEqual([{ name: 'Copy', device: 'gpu', instName: '__Copy_0' }]);
  });

  it('says a Python pipeline, an empty file and a truncated pipeline are not serialized pipelines', () => {
    const python = Buffer.from('import nvidia.dali as dali\n@dali.pipeline_def\ndef pipe():\n    return dali.fn.external_source()\n');
    expect(readDaliPipeline(source(python))).toMatchObject({ ok: false, reason: expect.stringMatching(/not a serialized DALI pipeline/) });
    expect(readDaliPipeline(source(Buffer.alloc(0)))).toEqual({ ok: false, reason: 'is empty' });
    const whole = daliPipelineBytes([{ name: 'Resize', device: 'gpu', outputs: ['gpu'] }], protoc);
    expect(readDaliPipeline(source(whole.subarray(0, whole.length - 5)))).toMatchObject({ ok: false });
  });

  it('reads the inputs as the backend lists them: input operators by name in byte order, with declared dtype and ndim', () => {
    const read = readDaliPipeline(
      source(
        daliPipelineByProtoc(
          {
            batchSize: 256,
            inputs: [
              { name: 'DALI_INPUT_1', device: 'gpu', dtype: 'FLOAT16', ndim: 1 },
              { name: 'DALI_INPUT_0' },
              { name: 'IMAGES', layout: 'HWC', dtype: 'UINT8' },
              { name: 'VIDEO', schema: 'experimental__inputs__Video', device: 'mixed' },
              { name: 'OLD', schema: '_ExternalSource', ndim: 2 },
            ],
            outputs: [{ name: 'DALI_OUTPUT_0', device: 'gpu', dtype: 'FLOAT', ndim: 3 }, { name: '__Resize_4' }],
            legacyExternalInputs: ['LEGACY'],
          },
          protoc,
        ),
      ),
    );
    if (!read.ok) throw new Error(read.reason);
    expect(read.pipeline.batchSize).toBe(256);
    expect(daliInputs(read.pipeline)).toEqual([
      { name: 'DALI_INPUT_0', dtype: -1, ndim: -1 },
      { name: 'DALI_INPUT_1', dtype: 8, ndim: 1 },
      { name: 'IMAGES', dtype: 0, ndim: 3 },
      { name: 'LEGACY', dtype: -1, ndim: -1 },
      { name: 'OLD', dtype: -1, ndim: 2 },
      { name: 'VIDEO', dtype: 0, ndim: 1 },
    ]);
    expect(read.pipeline.outputs).toEqual([
      { name: 'DALI_OUTPUT_0', device: 'gpu', dtype: 9, ndim: 3 },
      { name: '__Resize_4', device: 'cpu', dtype: -1, ndim: -1 },
    ]);
  });

  it('tells a binary file from text that may be a python pipeline for autoserialization', () => {
    const python = readDaliPipeline(source(Buffer.from('@autoserialize\n@dali.pipeline_def\ndef pipe():\n    pass\n')));
    expect(python).toMatchObject({ ok: false, binary: false });
    const binary = readDaliPipeline(source(Buffer.from([0x08, 0x00, 0x12, 0x05, 0x00, 0x00, 0xff])));
    expect(binary).toMatchObject({ ok: false, binary: true });
  });

  it('reads a pipeline whose constant is large by skipping its values, never reading them', () => {
    const values = Array.from({ length: 50_000 }, (_, i) => i % 7).join(' floats: ');
    const bytes = daliPipelineByProtoc({ inputs: [{ name: 'IN', dtype: 'FLOAT', ndim: 2 }], outputs: [{ name: 'OUT' }] }, protoc);
    // A Constant operator with 50,000 float values, as fn.constant or a remap table serializes.
    const constant = daliPipelineBytesWithConstant(values);
    const whole = Buffer.concat([constant, bytes]);
    let read = 0;
    const counting: ByteSource = {
      size: whole.length,
      read: (buffer, length, position) => {
        const n = whole.copy(buffer, 0, position, position + length);
        read += n;
        return n;
      },
    };
    const result = readDaliPipeline(counting);
    if (!result.ok) throw new Error(result.reason);
    expect(daliInputs(result.pipeline)).toEqual([{ name: 'IN', dtype: 9, ndim: 2 }]);
    expect(whole.length).toBeGreaterThan(200_000);
    expect(read).toBeLessThan(40_000);
  });

  function daliPipelineBytesWithConstant(values: string): Buffer {
    const text = `op { name: "Constant" output { name: "c" device: "cpu" } args { name: "fdata" type: "float" floats: ${values} ` +
      'is_vector: true } inst_name: "c" }';
    const proto = join(__dirname, 'dali_subset.proto');
    const run = spawnSync(protoc, ['--encode=dali_proto.PipelineDef', `-I${__dirname}`, proto], { input: text });
    if (run.status !== 0) throw new Error(run.stderr.toString());
    return run.stdout;
  }

  it('reads the pipelines the tests encode without protoc as it reads those protoc encodes', () => {
    const spec: DaliPipelineSpec = {
      batchSize: 3,
      inputs: [{ name: 'DALI_INPUT_0', dtype: 'UINT8', ndim: 1 }, { name: 'B', device: 'gpu', layout: 'HWC' }],
      outputs: [{ name: '__CropMirrorNormalize_3', device: 'gpu' }, { name: 'OUT', dtype: 'INT64', ndim: 0 }],
      legacyExternalInputs: ['L'],
    };
    const ours = readDaliPipeline(source(daliPipeline(spec)));
    const theirs = readDaliPipeline(source(daliPipelineByProtoc(spec, protoc)));
    expect(ours.ok).toBe(true);
    expect(ours).toEqual(theirs);
    expect(daliPipeline(spec).equals(daliPipelineByProtoc(spec, protoc))).toBe(true);
  });
});
