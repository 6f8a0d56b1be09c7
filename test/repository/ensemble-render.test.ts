import { buildEnsembleGraph, EnsembleGraph } from '../../lib/repository/ensemble-graph';
import { renderDot, renderMermaid, tensorTypeText } from '../../lib/repository/graph-render';
import { loadFixture } from './ensemble-fixtures';

function graphOf(fixture: string, ensemble: string): EnsembleGraph {
  const repo = loadFixture(fixture);
  return buildEnsembleGraph(repo.model(ensemble), repo.models);
}

/** Edges as `from -> to: tensor TYPE [dims]`, with node ids replaced by their labels. */
function edgeList(graph: EnsembleGraph): string[] {
  const label = (id: string) => graph.nodes.find((n) => n.id === id)!.label;
  return graph.edges.map((e) => `${label(e.from)} -> ${label(e.to)}: ${e.tensor} ${tensorTypeText(e)}`);
}

describe('ensemble graph model', () => {
  it('draws seed 000\'s ensemble_hf: inputs, three steps, outputs, and each tensor\'s type from the configs', () => {
    const graph = graphOf('seed-hf', 'ensemble');
    expect(graph).toMatchObject({ ensemble: 'ensemble', maxBatchSize: 16, decoupled: false });
    expect(graph.nodes.map((n) => [n.kind, n.label, n.runtime])).toEqual([
      ['input', 'INPUT0', undefined],
      ['step', 'preprocess', 'python'],
      ['step', 'bert-trt', 'tensorrt_plan'],
      ['step', 'postprocess', 'python'],
      ['output', 'finaloutput', undefined],
    ]);
    expect(edgeList(graph)).toEqual([
      'INPUT0 -> preprocess: INPUT0 STRING [1]',
      'preprocess -> bert-trt: token_ids INT32 [128]',
      'preprocess -> bert-trt: attn_mask INT32 [128]',
      'preprocess -> postprocess: attn_mask INT32 [128]',
      'bert-trt -> postprocess: output FP32 [128,384]',
      'postprocess -> finaloutput: finaloutput FP32 [384]',
    ]);
  });

  it('draws seed 000\'s DALI → Inception ensemble', () => {
    expect(edgeList(graphOf('seed-dali-inception', 'ensemble_dali_inception'))).toEqual([
      'INPUT -> dali: INPUT UINT8 [-1]',
      'dali -> inception_graphdef: preprocessed_image FP32 [299,299,3]',
      'inception_graphdef -> OUTPUT: OUTPUT FP32 [1001]',
    ]);
  });

  it('draws loose tensors and missing models as such', () => {
    const broken = graphOf('output-not-written', 'ens');
    expect(broken.nodes.filter((n) => n.kind === 'unconnected').map((n) => `${n.label} (${n.note})`)).toEqual([
      'ids_t (never read)',
      'ids_tt (never written)',
    ]);
    const missing = graphOf('missing-model', 'ens');
    expect(missing.nodes.filter((n) => n.missing).map((n) => n.label)).toEqual(['nett', 'post']);
  });

  it('marks decoupled steps and ensembles', () => {
    const graph = graphOf('decoupled-single', 'ens');
    expect(graph.decoupled).toBe(true);
    expect(graph.nodes.filter((n) => n.decoupled).map((n) => n.label)).toEqual(['gen_a']);
  });

  it('shows a nested ensemble as one step whose runtime is "ensemble"', () => {
    const graph = graphOf('nested', 'outer');
    expect(graph.nodes.find((n) => n.label === 'inner')).toMatchObject({ kind: 'step', runtime: 'ensemble' });
  });
});

describe('mermaid rendering', () => {
  it('writes a left-to-right flowchart with one box per ensemble and labelled edges', () => {
    const text = renderMermaid(graphOf('seed-hf', 'ensemble'));
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('flowchart LR');
    expect(lines[1]).toBe('  subgraph e0 ["ensemble (max_batch_size 16)"]');
    expect(lines).toContain('    n0(["INPUT0"])');
    expect(lines).toContain('    n2["bert-trt<br/>tensorrt_plan"]');
    expect(lines).toContain('    n2 -->|"output<br/>FP32 [128,384]"| n3');
    expect(lines[lines.length - 1]).toBe('  end');
  });

  it('escapes quotes and markup in names so the diagram still parses', () => {
    const graph: EnsembleGraph = {
      ensemble: 'e"1',
      maxBatchSize: 0,
      decoupled: false,
      nodes: [
        { id: 'input:a<b>', kind: 'input', label: 'a<b>' },
        { id: 'output:x#y', kind: 'output', label: 'x#y' },
      ],
      edges: [{ from: 'input:a<b>', to: 'output:x#y', tensor: 'say "hi"' }],
    };
    const text = renderMermaid(graph);
    expect(text).toContain('n0(["a#lt;b#gt;"])');
    expect(text).toContain('n1(["x#35;y"])');
    expect(text).toContain('n0 -->|"say #quot;hi#quot;"| n1');
    expect(text).toContain('subgraph e0 ["e#quot;1 (max_batch_size 0)"]');
  });

  it('styles loose tensors and missing models as problems', () => {
    const text = renderMermaid(graphOf('output-not-written', 'ens'));
    expect(text).toContain('n5{{"ids_tt<br/>(never written)"}}');
    expect(text).toMatch(/class n4,n5 problem\n$/);
  });

  it('puts several ensembles into one diagram with distinct node ids', () => {
    const repo = loadFixture('nested');
    const text = renderMermaid([
      buildEnsembleGraph(repo.model('outer'), repo.models),
      buildEnsembleGraph(repo.model('inner'), repo.models),
    ]);
    expect(text.match(/^ {2}subgraph /gm)).toHaveLength(2);
    const ids = [...text.matchAll(/^ {4}(n\d+)[[(]/gm)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(8);
  });
});

describe('dot rendering', () => {
  it('writes a digraph with a cluster per ensemble and labelled edges', () => {
    const text = renderDot(graphOf('seed-dali-inception', 'ensemble_dali_inception'));
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('digraph "ensemble_dali_inception" {');
    expect(lines).toContain('  subgraph cluster_0 {');
    expect(lines).toContain('    n1 [label="dali\\ndali", shape=box, style=rounded];');
    expect(lines).toContain('    n1 -> n2 [label="preprocessed_image\\nFP32 [299,299,3]"];');
    expect(lines[lines.length - 1]).toBe('}');
    expect(text.split('{').length).toBe(text.split('}').length);
  });

  it('escapes quotes and backslashes in labels', () => {
    const graph: EnsembleGraph = {
      ensemble: 'e',
      maxBatchSize: 0,
      decoupled: false,
      nodes: [
        { id: 'input:a', kind: 'input', label: 'a"\\b' },
        { id: 'output:b', kind: 'output', label: 'b' },
      ],
      edges: [{ from: 'input:a', to: 'output:b', tensor: 't' }],
    };
    expect(renderDot(graph)).toContain('n0 [label="a\\"\\\\b", shape=oval];');
  });

  it('draws missing models dashed and red', () => {
    expect(renderDot(graphOf('missing-model', 'ens'))).toContain('[label="nett\\nmissing", shape=box, style="rounded,dashed", color=red]');
  });
});
