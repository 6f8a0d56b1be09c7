import {
  checkEnsembleGraph,
  checkEnsembles,
  decoupledModels,
  findEnsembleCycle,
  isDecoupledEnsemble,
  topLevelEnsembles,
} from '../../lib/repository/ensemble-graph';
import type { Diagnostic } from '../../lib/diagnostics';
import { validateRepository } from '../../lib/repository/validate';
import { loadFixture } from './ensemble-fixtures';
import { FLOAT, onnxModel } from '../model-files/onnx-writer';
import { makeRepo, removeRepos, type RepoFiles } from './repo-builder';

afterAll(removeRepos);

/** Graph diagnostics of ensemble `model` in fixture `ensemble-<fixture>`, with the parser's findings passed in. */
function graphDiagnostics(fixture: string, model = 'ens'): Diagnostic[] {
  const repo = loadFixture(fixture);
  return checkEnsembleGraph(repo.model(model), repo.models, { modelDiagnostics: repo.diagnostics });
}

/** Every ensemble diagnostic of a fixture repository (static and graph rules, nested ensembles first). */
function allDiagnostics(fixture: string): Diagnostic[] {
  const repo = loadFixture(fixture);
  return checkEnsembles(repo.models, { modelDiagnostics: repo.diagnostics });
}

function errors(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === 'error');
}

describe('ensemble rules against the composing models (10.14–10.30)', () => {
  it.each([
    'valid-pipeline',
    'seed-hf',
    'seed-dali-inception',
    'nested',
    'batching-mixed',
    'optional-input',
    'shape-wildcard',
    'reshape-io',
    'version-specific',
    'decoupled-single',
  ])('accepts the %s fixture', (fixture) => {
    expect(allDiagnostics(fixture)).toEqual([]);
  });

  it.each(['seed-hf', 'seed-dali-inception', 'valid-pipeline', 'nested'])(
    'validates the whole %s repository (every rule, not only the ensemble ones)',
    async (fixture) => {
      const report = await validateRepository(loadFixture(fixture).path);
      // Fixtures hold empty stand-ins for weights: each is a warning that its contents are not checked, nothing more.
      expect(report.diagnostics.filter((d) => d.code !== 'model-file-empty')).toEqual([]);
      expect(report.ok).toBe(true);
    },
  );

  describe('dependencies (10.14–10.18)', () => {
    it('lists every missing composing model in one diagnostic, with Triton\'s wording and a spelling hint', () => {
      const diagnostics = graphDiagnostics('missing-model');
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]).toMatchObject({
        severity: 'error',
        code: 'ensemble-missing-model',
        file: 'ens/config.pbtxt',
        line: 37,
        model: 'ens',
      });
      expect(diagnostics[0]!.message).toContain('ensemble ens contains models that are not available or ambiguous: nett, post');
      expect(diagnostics[0]!.message).toContain("did you mean 'net' for 'nett'?");
    });

    it('names the whole path of a cycle between ensembles', () => {
      const repo = loadFixture('cycle');
      expect(findEnsembleCycle('ens_a', repo.models)).toEqual(['ens_a', 'ens_b', 'ens_a']);
      expect(findEnsembleCycle('ens_top', repo.models)).toBeUndefined();
      const diagnostics = graphDiagnostics('cycle', 'ens_a');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-cycle']);
      expect(diagnostics[0]!.message).toContain('circular dependency between ensembles: ens_a -> ... -> ens_b -> ens_a');
    });

    it('reports an ensemble that contains itself', () => {
      const diagnostics = graphDiagnostics('self-cycle');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-cycle']);
      expect(diagnostics[0]!.message).toContain('circular dependency between ensembles: ens -> ... -> ens -> ens');
    });

    it('marks an ensemble that runs a cyclic ensemble as depending on an invalid model', () => {
      const top = allDiagnostics('cycle').filter((d) => d.model === 'ens_top');
      expect(top.map((d) => d.code)).toEqual(['ensemble-invalid-model']);
      expect(top[0]!.message).toContain("ensemble 'ens_top' depends on 'ens_a' which is not valid");
      expect(top[0]!.message).toContain('circular dependency between ensembles: ens_a -> ... -> ens_b -> ens_a');
    });

    it('quotes the first error of an invalid composing model (10.16)', () => {
      const diagnostics = graphDiagnostics('invalid-model');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-invalid-model']);
      expect(diagnostics[0]!.message).toContain(
        "ensemble 'ens' depends on 'net' which is not valid. Model 'net' failed with error: Non-repeated field \"max_batch_size\"",
      );
      expect(diagnostics[0]!.message).toContain('(net/config.pbtxt:4)');
    });

    it('still calls a composing model invalid when its config did not parse and no diagnostics are passed in', () => {
      const repo = loadFixture('invalid-model');
      const diagnostics = checkEnsembleGraph(repo.model('ens'), repo.models);
      expect(diagnostics[0]!.message).toContain("Model 'net' failed with error: its net/config.pbtxt could not be parsed");
    });

    it('reports a composing model without a version directory (10.17)', () => {
      const diagnostics = graphDiagnostics('model-no-version');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-model-no-version']);
      expect(diagnostics[0]!.message).toContain("ensemble 'ens' depends on 'net' which has no loaded version.");
    });

    it('reports a composing model that several steps run once, at its first step', () => {
      // Steps 1 and 2 of this fixture both run `net`; take its versions away.
      const repo = loadFixture('tensor-written-twice');
      const models = new Map(repo.models);
      models.set('net', { ...repo.model('net'), versionDirs: [], versions: [] });
      const diagnostics = checkEnsembleGraph(repo.model('ens'), models);
      expect(diagnostics.map((d) => [d.code, d.line])).toEqual([['ensemble-model-no-version', 37]]);
    });

    it('reports a model_version that the composing model\'s version_policy does not load (10.18)', () => {
      const diagnostics = graphDiagnostics('version-not-loaded');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-model-version-not-loaded']);
      expect(diagnostics[0]!.message).toContain("ensemble 'ens' depends on 'net' whose required version 1 is not loaded.");
      expect(diagnostics[0]!.message).toContain("'net' loads version 2");
      expect(diagnostics[0]!.line).toBe(38);
    });

    it('explains that an unset model_version asks for version 0', () => {
      const diagnostics = graphDiagnostics('version-unset');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-model-version-not-loaded']);
      expect(diagnostics[0]!.message).toContain("depends on 'pre' whose required version 0 is not loaded");
      expect(diagnostics[0]!.message).toContain('set model_version: -1');
    });
  });

  describe('batch size and tensor maps (10.19–10.24)', () => {
    it('rejects an ensemble max_batch_size above a batching composing model\'s (3.3)', () => {
      const diagnostics = graphDiagnostics('max-batch-size');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-max-batch-size', 'ensemble-max-batch-size']);
      expect(diagnostics[1]!.message).toContain(
        'ensemble ens allows maximum batch size 32, but it contains model net which only allows maximum batch size to be 8',
      );
    });

    it('rejects an input_map key that is not an input of the composing model, without echoing the unmapped input', () => {
      const diagnostics = graphDiagnostics('unknown-input');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-unknown-input']);
      expect(diagnostics[0]!.message).toContain('in ensemble ens, ensemble tensor ids_t is mapping to non-existing input idz in model net');
      expect(diagnostics[0]!.message).toContain("did you mean 'ids'?");
      expect(diagnostics[0]).toMatchObject({ line: 40, column: 9 });
    });

    it('recognises an input_map written value-first', () => {
      const diagnostics = graphDiagnostics('swapped-map');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-unknown-input']);
      expect(diagnostics[0]!.message).toContain('key and value look swapped');
    });

    it('reports a failed composing model once: no map check against its config, no suggestion of its wrong names', async () => {
      const tensor = (name: string) => `{ name: "${name}" data_type: TYPE_FP32 dims: [ 16 ] }`;
      const files = {
        // 'inputs_ids' is the typo: the ONNX graph's input is input_ids, so Triton never loads the model.
        'net/config.pbtxt': `platform: "onnxruntime_onnx"\ninput [ ${tensor('inputs_ids')} ]\noutput [ ${tensor('out')} ]\n`,
        'net/1/model.onnx': onnxModel([['input_ids', FLOAT, [16]]], [['out', FLOAT, [16]]]),
        'ens/config.pbtxt':
          `platform: "ensemble"\ninput [ ${tensor('input_ids')} ]\noutput [ ${tensor('out')} ]\n` +
          'ensemble_scheduling { step [ { model_name: "net" model_version: -1 ' +
          'input_map { key: "input_ids" value: "input_ids" } output_map { key: "out" value: "out" } } ] }\n',
        'ens/1/': null,
      };
      const report = await validateRepository(makeRepo(files));
      expect(report.diagnostics.map((d) => [d.model, d.code])).toEqual([
        ['ens', 'ensemble-invalid-model'],
        ['net', 'onnx-unknown-input'],
      ]);
      expect(report.diagnostics.map((d) => d.message).join('\n')).not.toContain("did you mean 'inputs_ids'");
      // The root cause is printed first, the ensemble's echo of it after.
      const { formatReport } = await import('../../lib/cli/report-format');
      const text = formatReport(report, 'repo');
      expect(text.indexOf('[onnx-unknown-input]')).toBeLessThan(text.indexOf('[ensemble-invalid-model]'));
      expect(text.indexOf('net:')).toBeLessThan(text.indexOf('ens:'));
    });

    it('takes a key one typo from its value for a typo, not for a swapped pair', async () => {
      const tensor = (name: string) => `{ name: "${name}" data_type: TYPE_FP32 dims: [ 16 ] }`;
      const report = await validateRepository(
        makeRepo({
          'net/config.pbtxt': `platform: "tensorrt_plan"\ninput [ ${tensor('token_ids')} ]\noutput [ ${tensor('out')} ]\n`,
          'net/1/model.plan': '',
          'ens/config.pbtxt':
            `platform: "ensemble"\ninput [ ${tensor('token_ids')} ]\noutput [ ${tensor('out')} ]\n` +
            'ensemble_scheduling { step [ { model_name: "net" model_version: -1 ' +
            'input_map { key: "token_id" value: "token_ids" } output_map { key: "otu" value: "out" } } ] }\n',
          'ens/1/': null,
        }),
      );
      const messages = report.diagnostics.filter((d) => d.model === 'ens').map((d) => d.message);
      expect(messages.join('\n')).not.toContain('swapped');
      expect(messages.find((m) => m.includes('non-existing input token_id '))).toContain("did you mean 'token_ids'?");
      expect(messages.find((m) => m.includes('non-existing output otu '))).toContain("did you mean 'out'?");
    });

    it('rejects a non-optional composing input left out of input_map', () => {
      const diagnostics = graphDiagnostics('input-not-mapped');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-input-not-mapped']);
      expect(diagnostics[0]!.message).toContain('in ensemble ens, input mask in model net is not mapped to any ensemble tensors');
    });

    it('cannot see an input mapped twice (10.22): protobuf keeps the last entry, the parser warns', () => {
      const repo = loadFixture('input-mapped-twice');
      expect(repo.diagnostics.get('ens')!.map((d) => [d.severity, d.code])).toEqual([['warning', 'duplicate-map-key']]);
      expect(repo.model('ens').config.ensemble_scheduling!.step![1]!.input_map).toEqual({ ids: 'mask_t', mask: 'mask_t' });
      // What Triton then reports: the first mapping's tensor is read by nobody.
      const diagnostics = allDiagnostics('input-mapped-twice');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-tensor-unused']);
      expect(diagnostics[0]!.message).toContain("ensemble tensor 'ids_t' is unused in ensemble 'ens'");
    });

    it('rejects an output_map key that is not an output of the composing model', () => {
      const diagnostics = graphDiagnostics('unknown-output');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-unknown-output']);
      expect(diagnostics[0]!.message).toContain(
        'in ensemble ens, ensemble tensor SCORES is mapped from non-existing output LOGITS in model net',
      );
      expect(diagnostics[0]!.message).toContain("did you mean 'logits'?");
    });

    it('leaves two outputs into one tensor to the static rule instead of adding a shape echo', () => {
      expect(graphDiagnostics('outputs-into-one-tensor')).toEqual([]);
      expect(allDiagnostics('outputs-into-one-tensor').map((d) => d.code)).toEqual(['ensemble-outputs-into-one-tensor']);
    });

    it('does not check the maps of a composing model whose backend fills in its inputs and outputs, and says so', () => {
      const diagnostics = graphDiagnostics('autocomplete-io');
      expect(errors(diagnostics)).toEqual([]);
      expect(diagnostics.map((d) => [d.severity, d.code])).toEqual([['warning', 'ensemble-step-unchecked']]);
    });

    describe('a step into a model whose backend completes its config, where the config already lists tensors', () => {
      const tensor = (name: string) => `{ name: "${name}" data_type: TYPE_FP32 dims: [ 16 ] }`;
      /** Model `net` (its config's first lines given) with input `in` and output `out`, and an ensemble into it. */
      const repo = (net: string, netFiles: RepoFiles, inputKey: string, outputKey: string): RepoFiles => ({
        'net/config.pbtxt': `${net}\ninput [ ${tensor('in')} ]\noutput [ ${tensor('out')} ]\n`,
        ...netFiles,
        'ens/config.pbtxt':
          `platform: "ensemble"\ninput [ ${tensor('x')} ]\noutput [ ${tensor('y')} ]\n` +
          'ensemble_scheduling { step [ { model_name: "net" model_version: -1 ' +
          `input_map { key: "${inputKey}" value: "x" } output_map { key: "${outputKey}" value: "y" } } ] }\n`,
        'ens/1/': null,
      });
      const codes = (diagnostics: readonly Diagnostic[]) =>
        diagnostics.filter((d) => d.model === 'ens').map((d) => [d.severity, d.code]);

      it('rejects an unknown map key for TensorRT, which fills listed tensors but adds none', async () => {
        // tensorrt_backend src/model_state.cc:976-990 (FixIO): only an empty list is replaced by the engine's tensors.
        const report = await validateRepository(
          makeRepo(repo('platform: "tensorrt_plan"', { 'net/1/model.plan': '' }, 'in_0', 'out_0')),
        );
        expect(codes(report.diagnostics)).toEqual([
          ['error', 'ensemble-unknown-input'],
          ['error', 'ensemble-unknown-output'],
        ]);
        expect(report.diagnostics.find((d) => d.code === 'ensemble-unknown-input')!.message).toContain(
          "in ensemble ens, ensemble tensor x is mapping to non-existing input in_0 in model net. 'net' has input 'in'",
        );
        expect(report.ok).toBe(false);
      });

      it("warns only where the backend may add tensors: a python model's auto_complete_config", async () => {
        const model = [
          'import triton_python_backend_utils as pb_utils',
          'class TritonPythonModel:',
          '    @staticmethod',
          '    def auto_complete_config(config):',
          '        return config',
          '    def execute(self, requests):',
          '        return []',
          '',
        ].join('\n');
        const report = await validateRepository(makeRepo(repo('backend: "python"', { 'net/1/model.py': model }, 'in_0', 'out_0')));
        expect(codes(report.diagnostics)).toEqual([
          ['warning', 'ensemble-unknown-input'],
          ['warning', 'ensemble-unknown-output'],
        ]);
        expect(report.ok).toBe(true);
      });
    });
  });

  describe('data type and shape agreement (10.25–10.27)', () => {
    it('rejects a tensor whose writer and reader disagree on the data type', () => {
      const diagnostics = graphDiagnostics('dtype-mismatch');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-dtype-mismatch']);
      expect(diagnostics[0]!.message).toContain(
        'in ensemble ens, ensemble tensor ids_t: inconsistent data type: ' +
          'TYPE_INT32 is inferred from model pre while TYPE_INT64 is inferred from model net',
      );
    });

    it('rejects a shape mismatch, printing the full dims with the batch dimension as Triton does', () => {
      const diagnostics = graphDiagnostics('shape-mismatch');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-shape-mismatch']);
      expect(diagnostics[0]!.message).toContain(
        'in ensemble ens, ensemble tensor ids_t: inconsistent shape: ' +
          '[-1,16] is inferred from model pre while [-1,32] is inferred from model net',
      );
    });

    it('compares ensemble outputs by reshape.shape when a reshape is given', () => {
      expect(graphDiagnostics('reshape-io')).toEqual([]);
      const diagnostics = graphDiagnostics('reshape-missing');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-shape-mismatch']);
      expect(diagnostics[0]!.message).toContain('[-1,1,4] is inferred from model ens while [-1,4] is inferred from model net');
    });

    it('uses a nested ensemble\'s own inputs and outputs as its tensors', () => {
      const diagnostics = graphDiagnostics('nested-dtype-mismatch', 'outer');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-dtype-mismatch']);
      expect(diagnostics[0]!.message).toContain('TYPE_FP32 is inferred from model inner while TYPE_INT64 is inferred from model post');
    });

    it('makes an outer ensemble invalid when the inner one is, quoting the inner error', () => {
      const diagnostics = allDiagnostics('nested-invalid-inner');
      expect(diagnostics.filter((d) => d.model === 'inner').length).toBeGreaterThan(0);
      const outer = diagnostics.filter((d) => d.model === 'outer');
      expect(outer.map((d) => d.code)).toEqual(['ensemble-invalid-model']);
      expect(outer[0]!.message).toContain("Model 'inner' failed with error: ensemble output 'SCORES' for ensemble inner' is not used");
    });
  });

  describe('decoupled models (10.28–10.29)', () => {
    it('rejects a step that combines the response streams of two decoupled models', () => {
      const diagnostics = graphDiagnostics('decoupled-mixed');
      expect(diagnostics.map((d) => d.code)).toEqual(['ensemble-mixed-decoupled-inputs']);
      expect(diagnostics[0]!.message).toContain(
        "in ensemble ens, step of model 'merge' receives inputs originated from different decoupled models",
      );
      expect(diagnostics[0]!.message).toContain("decoupled model 'gen_a'");
      expect(diagnostics[0]!.message).toContain("decoupled model 'gen_b'");
    });

    it('calls an ensemble decoupled when a composing model is, and names it', () => {
      const single = loadFixture('decoupled-single');
      expect(isDecoupledEnsemble(single.model('ens'), single.models)).toBe(true);
      expect(decoupledModels(single.model('ens'), single.models)).toEqual(['gen_a']);
      const plain = loadFixture('valid-pipeline');
      expect(isDecoupledEnsemble(plain.model('ens'), plain.models)).toBe(false);
      expect(isDecoupledEnsemble(plain.model('net'), plain.models)).toBe(false);
    });

    it('sees a decoupled model inside a nested ensemble', () => {
      const repo = loadFixture('nested');
      const net = repo.model('net');
      const models = new Map(repo.models);
      models.set('net', { ...net, config: { ...net.config, model_transaction_policy: { decoupled: true } } });
      expect(decoupledModels(repo.model('outer'), models)).toEqual(['net']);
    });
  });

  it('finds the top-level ensembles of a repository', () => {
    expect(topLevelEnsembles(loadFixture('nested').models).map((m) => m.name)).toEqual(['outer']);
    expect(topLevelEnsembles(loadFixture('cycle').models).map((m) => m.name)).toEqual(['ens_top']);
    expect(topLevelEnsembles(loadFixture('self-cycle').models).map((m) => m.name)).toEqual(['ens']);
  });
});
