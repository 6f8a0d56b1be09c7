// The prefix formats Triton, its python stub and ONNX Runtime write (triton-inference-server/common src/logging.cc,
// python_backend src/pb_stub_log.cc), split into level, time, source and message.
import { parseTritonLine } from '../../lib/logs/triton-log-line';

describe('Triton log line prefix', () => {
  it('reads the default format: level, MMDD time in UTC, pid, file:line', () => {
    const line = parseTritonLine("I1130 15:37:28.123456 1 model_lifecycle.cc:849] successfully loaded 'resnet.tar.gz'", 2026);
    expect(line).toEqual({
      level: 'info',
      timestamp: Date.UTC(2026, 10, 30, 15, 37, 28, 123.456),
      pid: 1,
      source: 'model_lifecycle.cc:849',
      message: "successfully loaded 'resnet.tar.gz'",
      escaped: false,
    });
  });

  it('unescapes the JSON-escaped messages of Triton 24.06 and later, newlines included', () => {
    const line = parseTritonLine(
      "E1130 15:37:28.000001 1 model_lifecycle.cc:654] \"failed to load 'm' version 1: Internal: " +
        'ValueError: bad\\n\\nAt:\\n  /opt/ml/models/h/model/m/1/model.py(9): initialize\\n"',
      2026,
    );
    expect(line?.level).toBe('error');
    expect(line?.escaped).toBe(true);
    expect(line?.message).toBe(
      "failed to load 'm' version 1: Internal: ValueError: bad\n\nAt:\n  /opt/ml/models/h/model/m/1/model.py(9): initialize",
    );
  });

  it('drops the trailing newline std::endl leaves in SageMaker messages', () => {
    expect(
      parseTritonLine('I1130 15:37:28.000001 1 sagemaker_server.cc:719] "Unloading SageMaker TargetModel: a.tar.gz\\n"', 2026)?.message,
    ).toBe('Unloading SageMaker TargetModel: a.tar.gz');
  });

  it('reads the ISO8601 format of --log-format ISO8601', () => {
    expect(parseTritonLine('2026-11-30T15:37:28Z W 1 sagemaker_server.cc:1025] "Several model directories found."')).toMatchObject({
      level: 'warning',
      timestamp: Date.UTC(2026, 10, 30, 15, 37, 28),
      source: 'sagemaker_server.cc:1025',
      message: 'Several model directories found.',
    });
  });

  it("reads the python stub's own prefix, with its pid and the extra space", () => {
    expect(
      parseTritonLine(
        "I1130 15:37:28.000001 4242 pb_stub.cc:389]  Failed to initialize Python stub: ModuleNotFoundError: No module named 'x'",
        2026,
      ),
    ).toMatchObject({
      pid: 4242,
      source: 'pb_stub.cc:389',
      message: "Failed to initialize Python stub: ModuleNotFoundError: No module named 'x'",
    });
  });

  it("reads ONNX Runtime's own logger (microsoft/onnxruntime#18743)", () => {
    expect(
      parseTritonLine(
        '2023-12-07 10:14:43.214806225 [E:onnxruntime:, sequential_executor.cc:514 ' +
          "ExecuteKernel] Non-zero status code returned while running FusedConv node. Name:'conv'",
      ),
    ).toMatchObject({
      level: 'error',
      timestamp: Date.UTC(2023, 11, 7, 10, 14, 43, 214),
      source: 'sequential_executor.cc:514 ExecuteKernel',
    });
  });

  it('returns undefined for lines without a prefix', () => {
    for (const text of [
      '',
      'At:',
      '  /opt/ml/models/h/model/m/1/model.py(9): initialize',
      '+----------+---------+',
      'Signal (15) received.',
      'Error: x',
      'I am a print()',
    ]) {
      expect(parseTritonLine(text)).toBeUndefined();
    }
  });
});
