// Triton's PyTorch backend, offline: a config's inputs against the forward of a TorchScript model.pt (archives from
// test/model-files/torchscript-writer.ts), with the backend's own wording where it fails the load.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkTorchScriptModel } from '../../lib/repository/torchscript-rules';
import { loadRepository, validateRepository } from '../../lib/repository/validate';
import { torchScript } from '../model-files/torchscript-writer';
import { makeRepo, removeRepos } from './repo-builder';

afterAll(removeRepos);

const io = (name: string) => `{ name: "${name}" data_type: TYPE_FP32 dims: [ 4 ] }`;
const config = (inputs: string[], extra = '') =>
  `platform: "pytorch_libtorch"\nmax_batch_size: 8\ninput [ ${inputs.map(io).join(', ')} ]\n` +
  `output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]\n${extra}`;

async function check(forward: string | Buffer, inputs: string[], extra = '') {
  const model = typeof forward === 'string' ? torchScript({ forward }) : forward;
  const repo = await loadRepository(makeRepo({ 'm/config.pbtxt': config(inputs, extra), 'm/1/model.pt': model }));
  return checkTorchScriptModel(repo.models[0]!).map((d) => `${d.severity} ${d.code}: ${d.message}`);
}

describe("Triton's PyTorch backend, offline", () => {
  const pair = 'input_ids: Tensor, attention_mask: Tensor';

  it("accepts inputs named after forward's arguments, in any order, or INPUT__<index>", async () => {
    expect(await check(pair, ['attention_mask', 'input_ids'])).toEqual([]);
    expect(await check(pair, ['INPUT__1', 'INPUT__0'])).toEqual([]);
    expect(await check('texts: List[str]', ['TEXT__0'])).toEqual([]);
  });

  it('accepts any input names for a forward that takes one Dict(str, Tensor)', async () => {
    expect(await check('inputs: Dict[str, Tensor]', ['a', 'b', 'c'])).toEqual([]);
  });

  it('fails the load when the config has more or fewer inputs than forward takes', async () => {
    expect(await check(pair, ['input_ids'])).toEqual([
      "error pytorch-input-count: unable to load model 'm', configuration expects 1 inputs, model provides 2. " +
        '(m/1/model.pt: forward(input_ids: Tensor, attention_mask: Tensor); the configuration\'s count includes batch ' +
        'inputs, sequence controls and states.)',
    ]);
    expect(await check(pair, ['input_ids', 'attention_mask', 'token_type_ids'])).toEqual([
      expect.stringContaining("configuration expects 3 inputs, model provides 2"),
    ]);
  });

  it('counts sequence controls and batch inputs among the inputs forward must take', async () => {
    const controls =
      'sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }';
    expect(await check('x: Tensor, start: Tensor', ['x'], controls)).toEqual([]);
    expect(await check('x: Tensor', ['x'], controls)).toEqual([
      expect.stringContaining('configuration expects 2 inputs, model provides 1'),
    ]);
    const batchInput = 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_FP32 source_input: "x" } ]';
    expect(await check('x: Tensor, n: Tensor', ['x'], batchInput)).toEqual([]);
  });

  it('fails the load for a forward argument that is not a Tensor or a List, and for two Dicts', async () => {
    expect(await check('x: Tensor, k: int', ['x', 'k'])).toEqual([
      "error pytorch-forward-argument-type: An input of type 'int' was detected in the model. Only a single input of type " +
        "Dict(str, Tensor) or input(s) of type Tensor are supported. (m/1/model.pt: argument 'k' of forward(x: Tensor, k: int).) " +
        'The PyTorch backend fails the load: make forward take Tensors (or List[str]).',
    ]);
    expect(await check('a: Dict[str, Tensor], b: Dict[str, Tensor]', ['a', 'b'])).toEqual([
      expect.stringMatching(/^error pytorch-forward-dict: Multiple inputs of kind DictType were detected/),
    ]);
    expect(await check('x: Tensor, mask: Optional[Tensor]=None', ['x', 'mask'])).toEqual([
      expect.stringMatching(/^error pytorch-forward-argument-type: An input of type 'Optional\[Tensor\]'/),
    ]);
  });

  it("warns when a name is neither forward's argument nor <name>__<index>: the config's order decides", async () => {
    expect(await check(pair, ['input_idz', 'attention_mask'])).toEqual([
      "warning pytorch-input-order: input 'input_idz' is neither an argument of forward nor named <name>__<index> (did you mean " +
        "'input_ids' for 'input_idz'?), so the PyTorch backend feeds the inputs to m/1/model.pt's forward(input_ids: Tensor, " +
        "attention_mask: Tensor) in the config's order: 'input_idz' -> input_ids, 'attention_mask' -> attention_mask. Name the " +
        "inputs after forward's arguments (input_ids, attention_mask) or INPUT__0, INPUT__1, ... to map them by name.",
    ]);
  });

  it('warns when an INPUT__<index> names an argument forward does not have, or two name the same one', async () => {
    expect(await check(pair, ['INPUT__0', 'INPUT__2'])).toEqual([
      expect.stringMatching(/^warning pytorch-input-index: input 'INPUT__2' names argument 2 of forward, which takes 2/),
    ]);
    expect(await check(pair, ['A__1', 'B__1'])).toEqual([
      expect.stringMatching(/^warning pytorch-input-index: inputs 'A__1' and 'B__1' both name argument 1 \('attention_mask'\)/),
    ]);
  });

  it('fails the load of a model.pt that is not a TorchScript archive; an empty one is a stand-in', async () => {
    expect(await check(Buffer.from('stand-in\n'), ['x'])).toEqual([
      expect.stringMatching(/^error pytorch-invalid: m\/1\/model.pt is not a TorchScript archive .*failed to load model 'm'/),
    ]);
    expect(await check(torchScript({ forward: 'x: Tensor', noCode: true }), ['x'])).toEqual([
      expect.stringMatching(/^error pytorch-invalid: .*written by torch.save, not torch.jit.save/),
    ]);
    expect(await check(Buffer.alloc(0), ['x'])).toEqual([expect.stringMatching(/^warning model-file-empty: m\/1\/model.pt is empty/)]);
  });

  it('runs in validate: a count mismatch fails the repository, a match passes it', async () => {
    const files = (inputs: string[]) => ({ 'm/config.pbtxt': config(inputs), 'm/1/model.pt': torchScript({ forward: pair }) });
    const bad = await validateRepository(makeRepo(files(['input_ids'])));
    expect(bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(['pytorch-input-count']);
    const good = await validateRepository(makeRepo(files(['input_ids', 'attention_mask'])));
    expect(good.diagnostics.filter((d) => d.code.startsWith('pytorch-'))).toEqual([]);
    expect(good.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });
});

describe('the resnet_pytorch example against a model.pt laid out as its export script writes it', () => {
  const exampleConfig = readFileSync(join(__dirname, '..', '..', 'examples', 'resnet_pytorch', 'resnet', 'config.pbtxt'), 'utf8');
  // torch.jit.trace of torchvision's ResNet-50 (export_torchscript.py): forward(self, x: Tensor) in a mangled module.
  const traced = (forward: string) =>
    torchScript({ forward, module: '__torch__.torchvision.models.resnet', className: 'ResNet', archive: 'model' });

  it('validates when the model takes the one tensor INPUT__0 feeds, and fails when it takes two', async () => {
    const repo = (model: Buffer) => makeRepo({ 'resnet/config.pbtxt': exampleConfig, 'resnet/1/model.pt': model });
    const good = await validateRepository(repo(traced('x: Tensor')));
    expect(good.diagnostics.filter((d) => d.severity === 'error' || d.code.startsWith('pytorch-'))).toEqual([]);
    const bad = await validateRepository(repo(traced('x: Tensor, scale: Tensor')));
    expect(bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message)).toEqual([
      expect.stringContaining("unable to load model 'resnet', configuration expects 1 inputs, model provides 2"),
    ]);
  });
});
