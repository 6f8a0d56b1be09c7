import { parseModelConfig } from '../../lib/config/parse';
import { applyEdits, removeField, replaceValue, textFields, valuesOf } from '../../lib/config/text-fields';

const CONFIG = `# classifier on the GPU
name: "classifier"
backend: "onnxruntime"
instance_group [
  {
    name: "first"   # the main one
    kind: KIND_GPU
    gpus: [ 0, 1 ]
    count: 2
  },
  { kind: KIND_GPU gpus: 0 gpus: 1 }
]
instance_group { kind: KIND_AUTO }
parameters { key: "a" value: { string_value: "x" "y" } }
`;

describe('text fields of a config.pbtxt', () => {
  it('gives each field with its offsets, list elements and repeated occurrences in the order written', () => {
    const fields = textFields(CONFIG)!;
    expect(fields.map((f) => f.name)).toEqual(['name', 'backend', 'instance_group', 'instance_group', 'parameters']);
    const groups = valuesOf(fields, 'instance_group');
    expect(groups).toHaveLength(3);
    const first = groups[0]!;
    if (first.kind !== 'message') throw new Error('not a message');
    const gpus = first.fields.find((f) => f.name === 'gpus')!;
    expect(CONFIG.slice(gpus.start, gpus.end)).toBe('gpus: [ 0, 1 ]');
    expect(gpus.values.map((v) => (v.kind === 'scalar' ? v.text : '?'))).toEqual(['0', '1']);
    const parameters = valuesOf(fields, 'parameters')[0]!;
    if (parameters.kind !== 'message') throw new Error('not a message');
    const value = valuesOf(parameters.fields, 'value')[0]!;
    if (value.kind !== 'message') throw new Error('not a message');
    expect(valuesOf(value.fields, 'string_value')[0]).toMatchObject({ kind: 'scalar', text: '"x" "y"' });
  });

  it('is undefined for text that is not well-formed', () => {
    expect(textFields('instance_group { kind: KIND_GPU')).toBeUndefined();
    expect(textFields('name: }')).toBeUndefined();
  });

  it('edits in place: a value replaced and fields removed keep every comment and the rest of the layout', () => {
    const fields = textFields(CONFIG)!;
    const [first, second] = valuesOf(fields, 'instance_group');
    if (first?.kind !== 'message' || second?.kind !== 'message') throw new Error('not messages');
    const edits = [first, second].flatMap((group) => [
      replaceValue(valuesOf(group.fields, 'kind')[0]!, 'KIND_CPU'),
      ...group.fields.filter((f) => f.name === 'gpus').map((f) => removeField(CONFIG, f)),
    ]);
    const out = applyEdits(CONFIG, edits);
    expect(out).toBe(`# classifier on the GPU
name: "classifier"
backend: "onnxruntime"
instance_group [
  {
    name: "first"   # the main one
    kind: KIND_CPU
    count: 2
  },
  { kind: KIND_CPU }
]
instance_group { kind: KIND_AUTO }
parameters { key: "a" value: { string_value: "x" "y" } }
`);
    const parsed = parseModelConfig(out);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.config.instance_group).toEqual([
      { name: 'first', kind: 'KIND_CPU', count: 2 },
      { kind: 'KIND_CPU' },
      { kind: 'KIND_AUTO' },
    ]);
  });

  it('removes a field last on a line with the spaces before it, and keeps a comment after one', () => {
    const text = 'instance_group [ { kind: KIND_GPU gpus: [ 0 ]\n} ]\ninstance_group [ { kind: KIND_GPU gpus: [ 0 ] # gpu 0\n} ]\n';
    const groups = valuesOf(textFields(text)!, 'instance_group');
    const edits = groups.map((g) => {
      if (g.kind !== 'message') throw new Error('not a message');
      return removeField(text, g.fields.find((f) => f.name === 'gpus')!);
    });
    expect(applyEdits(text, edits)).toBe('instance_group [ { kind: KIND_GPU\n} ]\ninstance_group [ { kind: KIND_GPU # gpu 0\n} ]\n');
  });

  it('refuses overlapping edits', () => {
    expect(() => applyEdits('abcdef', [{ start: 0, end: 3, text: '' }, { start: 2, end: 4, text: '' }])).toThrow(/overlapping/);
  });
});
