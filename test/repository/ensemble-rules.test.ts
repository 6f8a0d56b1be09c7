import { checkEnsembleStatic } from '../../lib/repository/ensemble-rules';
import type { Diagnostic } from '../../lib/diagnostics';
import type { LoadedModel } from '../../lib/repository/model';
import { loadFixture } from './ensemble-fixtures';
import { modelFromText } from './model-rules/model-from-text';

/** The static diagnostics of the ensemble `model` in fixture `ensemble-<fixture>`. */
function staticDiagnostics(fixture: string, model = 'ens'): Diagnostic[] {
  return checkEnsembleStatic(loadFixture(fixture).model(model));
}

/** An ensemble model straight from config text, for shapes no fixture needs to hold. */
function ensembleFromText(text: string): LoadedModel {
  const { model, diagnostics } = modelFromText(text, { '1/': null }, { name: 'e' });
  expect(diagnostics).toEqual([]);
  return model;
}

function codes(diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.map((d) => d.code);
}

describe('static ensemble rules (10.1–10.12)', () => {
  it.each(['valid-pipeline', 'seed-hf', 'seed-dali-inception', 'nested', 'reshape-io', 'optional-input'])(
    'accepts the %s fixture',
    (fixture) => {
      const repo = loadFixture(fixture);
      for (const model of repo.models.values()) expect(checkEnsembleStatic(model)).toEqual([]);
    },
  );

  it('ignores models that are not ensembles', () => {
    expect(checkEnsembleStatic(loadFixture('valid-pipeline').model('net'))).toEqual([]);
  });

  it.each([
    ['instance-group', 'ensemble-instance-group', "instance group should not be specified for ensemble 'ens'", 18],
    ['optimization', 'ensemble-optimization', "optimization should not be specified for ensemble 'ens'", 18],
    ['model-warmup', 'ensemble-model-warmup', "model_warmup can not be specified for ensemble 'ens'", 18],
    ['no-step', 'ensemble-no-step', "must specify 'step' for ensemble 'ens'", 18],
  ])('rejects the %s fixture with Triton\'s wording', (fixture, code, text, line) => {
    const diagnostics = staticDiagnostics(fixture);
    expect(codes(diagnostics)).toEqual([code]);
    expect(diagnostics[0]).toMatchObject({ severity: 'error', file: 'ens/config.pbtxt', line, model: 'ens' });
    expect(diagnostics[0]!.message).toContain(text);
  });

  it('names each step that lacks model_name, input_map or output_map, with its 0-based index and line', () => {
    const diagnostics = staticDiagnostics('step-missing-fields');
    expect(diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['ensemble-step-model-name', 20],
      ['ensemble-step-input-map', 35],
      ['ensemble-step-output-map', 43],
    ]);
    expect(diagnostics[0]!.message).toContain("must specify 'model_name' in step 0 of ensemble 'ens'");
    expect(diagnostics[1]!.message).toContain("must specify 'input_map' in step 1 of ensemble 'ens'");
    expect(diagnostics[2]!.message).toContain("must specify 'output_map' in step 2 of ensemble 'ens'");
  });

  it('rejects a tensor written by two steps, pointing at the second writer', () => {
    const diagnostics = staticDiagnostics('tensor-written-twice');
    expect(codes(diagnostics)).toEqual(['ensemble-tensor-written-twice']);
    expect(diagnostics[0]!.message).toContain(
      "ensemble tensor 'SCORES' can appear in an output map only once for ensemble 'ens' step 2",
    );
    expect(diagnostics[0]!.message).toContain("step 1 (model 'net') already writes 'SCORES'");
    expect(diagnostics[0]!.line).toBe(65);
  });

  it('shows an ensemble fault with the caret excerpt of its line, like every other fault', () => {
    const [fault] = staticDiagnostics('tensor-written-twice');
    expect(fault).toMatchObject({ line: 65, column: 9 });
    expect(fault!.excerpt).toBe(`        value: "SCORES"\n${' '.repeat(8)}^`);
  });

  it('rejects two outputs of one step mapped into one tensor (10.24 needs no composing config)', () => {
    const diagnostics = staticDiagnostics('outputs-into-one-tensor');
    expect(codes(diagnostics)).toEqual(['ensemble-outputs-into-one-tensor']);
    expect(diagnostics[0]!.message).toContain(
      'in ensemble ens, multiple outputs in model pre are mapped to the same ensemble tensor mask_t',
    );
    expect(diagnostics[0]!.message).toContain("'MASK' and 'LEN'");
  });

  it('rejects an ensemble input no step reads, keeping Triton\'s stray quote so the text can be searched', () => {
    const diagnostics = staticDiagnostics('input-unused');
    expect(codes(diagnostics)).toEqual(['ensemble-input-unused']);
    expect(diagnostics[0]!.message).toContain("ensemble input 'LANGUAGE' for ensemble ens' is not used");
    expect(diagnostics[0]!.line).toBe(10);
  });

  it('rejects an ensemble output no step writes and suggests the near-miss tensor', () => {
    const diagnostics = staticDiagnostics('output-unused');
    expect(codes(diagnostics)).toEqual(['ensemble-output-unused']);
    expect(diagnostics[0]!.message).toContain("ensemble output 'SCORE' for ensemble ens' is not used");
    expect(diagnostics[0]!.message).toContain("a step writes 'SCORES'");
  });

  it('reports an output that no chain of steps reaches, naming the disconnected tensor and its likely spelling', () => {
    const diagnostics = staticDiagnostics('output-not-written');
    const notWritten = diagnostics.find((d) => d.code === 'ensemble-output-not-written')!;
    expect(notWritten.message).toContain(
      "output 'SCORES' for ensemble 'ens' is not written: at least one of its depending tensors, 'ids_tt', is not connected",
    );
    const unused = diagnostics.filter((d) => d.code === 'ensemble-tensor-unused');
    expect(unused.map((d) => d.message.match(/ensemble tensor '([^']+)'/)![1]).sort()).toEqual(['ids_t', 'ids_tt']);
    expect(unused.find((d) => d.message.includes("'ids_tt'"))!.message).toContain("did you mean 'ids_t'?");
  });

  it('fires a step only when ALL its input tensors are ready', () => {
    // `net` reads ids_t (ready) and mask_loop, which only a later step computes from net's own output.
    const diagnostics = staticDiagnostics('tensor-loop');
    expect(codes(diagnostics).sort()).toEqual(['ensemble-output-not-written', 'ensemble-tensor-unused']);
    expect(diagnostics.find((d) => d.code === 'ensemble-output-not-written')!.message).toContain('loop');
    expect(diagnostics.find((d) => d.code === 'ensemble-tensor-unused')!.message).toContain(
      "ensemble tensor 'mask_loop' is unused in ensemble 'ens'",
    );
  });

  it('rejects a step output that nothing reads, and says composing outputs may stay unmapped instead', () => {
    const diagnostics = staticDiagnostics('tensor-unread');
    expect(codes(diagnostics)).toEqual(['ensemble-tensor-unused']);
    expect(diagnostics[0]!.message).toContain("ensemble tensor 'len_t' is unused in ensemble 'ens'");
    expect(diagnostics[0]!.message).toContain('may be left unmapped');
    expect(diagnostics[0]!.line).toBe(36);
  });

  it('says plainly when steps only read an ensemble output that none writes', () => {
    const model = ensembleFromText(`
      name: "e" platform: "ensemble" max_batch_size: 0
      input { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] }
      output { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] }
      ensemble_scheduling { step { model_name: "m" model_version: -1
        input_map { key: "X" value: "IN" } input_map { key: "Y" value: "OUT" }
        output_map { key: "Z" value: "tmp" } } }`);
    const diagnostics = checkEnsembleStatic(model);
    const notWritten = diagnostics.find((d) => d.code === 'ensemble-output-not-written')!;
    expect(notWritten.message).toContain(
      "output 'OUT' for ensemble 'e' is not written. Steps read 'OUT' but no step's output_map writes it",
    );
    expect(notWritten).toMatchObject({ file: 'e/config.pbtxt', line: 4 });
  });

  it('points out an input_map whose key and value are swapped', () => {
    const diagnostics = staticDiagnostics('swapped-map');
    const raw = diagnostics.find((d) => d.code === 'ensemble-tensor-unused')!;
    expect(raw.message).toContain('key and value look swapped');
  });

  it('accepts composing outputs left unmapped (10.30)', () => {
    // pre's LEN output is mapped nowhere in valid-pipeline.
    const repo = loadFixture('valid-pipeline');
    expect(repo.model('pre').config.output!.map((o) => o.name)).toContain('LEN');
    expect(checkEnsembleStatic(repo.model('ens'))).toEqual([]);
  });

  it('skips an ensemble whose config did not parse', () => {
    const model = loadFixture('valid-pipeline').model('ens');
    expect(checkEnsembleStatic({ ...model, parsed: false, config: { platform: 'ensemble', ensemble_scheduling: {} } })).toEqual([]);
  });
});
