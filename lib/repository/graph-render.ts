// Ensemble graphs as text pictures: Mermaid (renders on GitHub and in most Markdown viewers) and Graphviz dot.
// Several ensembles go into one picture, each in its own box.

import type { EnsembleGraph, GraphEdge, GraphNode } from './ensemble-graph';

/** `FP32 [128,384]`: the data type without `TYPE_`, then the declared dims. */
export function tensorTypeText(edge: GraphEdge): string {
  const type = edge.dataType ? edge.dataType.replace(/^TYPE_/, '') : '';
  const dims = edge.dims ? `[${edge.dims.join(',')}]` : '';
  return [type, dims].filter(Boolean).join(' ');
}

function nodeLines(node: GraphNode): string[] {
  switch (node.kind) {
    case 'step': {
      const details = [
        node.missing ? 'missing' : node.runtime,
        node.version !== undefined ? `version ${node.version}` : undefined,
        node.decoupled ? 'decoupled' : undefined,
      ].filter((d): d is string => d !== undefined);
      return [node.label, ...(details.length ? [details.join(', ')] : [])];
    }
    case 'unconnected':
      return [node.label, `(${node.note ?? 'unconnected'})`];
    default:
      return [node.label];
  }
}

function edgeLines(edge: GraphEdge): string[] {
  const type = tensorTypeText(edge);
  return type ? [edge.tensor, type] : [edge.tensor];
}

function graphTitle(graph: EnsembleGraph): string {
  const details = [`max_batch_size ${graph.maxBatchSize}`, ...(graph.decoupled ? ['decoupled'] : [])];
  return `${graph.ensemble} (${details.join(', ')})`;
}

/** Stable short identifiers: names may hold characters neither Mermaid nor dot accept bare. */
function identifiers(graphs: readonly EnsembleGraph[]): Map<EnsembleGraph, Map<string, string>> {
  const ids = new Map<EnsembleGraph, Map<string, string>>();
  let next = 0;
  for (const graph of graphs) {
    const own = new Map<string, string>();
    for (const node of graph.nodes) own.set(node.id, `n${next++}`);
    ids.set(graph, own);
  }
  return ids;
}

// ---- Mermaid ----------------------------------------------------------------------------------------------------

/** Mermaid text inside double quotes: `"` and `#` would end or start an entity, `<`/`>` would be read as HTML. */
function mermaidText(lines: readonly string[]): string {
  const escape = (s: string) =>
    s.replace(/#/g, '#35;').replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;');
  return `"${lines.map(escape).join('<br/>')}"`;
}

function mermaidNode(id: string, node: GraphNode): string {
  const text = mermaidText(nodeLines(node));
  switch (node.kind) {
    case 'input':
    case 'output':
      return `${id}([${text}])`;
    case 'unconnected':
      return `${id}{{${text}}}`;
    default:
      return `${id}[${text}]`;
  }
}

export function renderMermaid(graphs: EnsembleGraph | readonly EnsembleGraph[]): string {
  const list = Array.isArray(graphs) ? (graphs as readonly EnsembleGraph[]) : [graphs as EnsembleGraph];
  const ids = identifiers(list);
  const lines = ['flowchart LR'];
  const problems: string[] = [];
  list.forEach((graph, g) => {
    const own = ids.get(graph)!;
    lines.push(`  subgraph e${g} [${mermaidText([graphTitle(graph)])}]`, '    direction LR');
    for (const node of graph.nodes) {
      lines.push(`    ${mermaidNode(own.get(node.id)!, node)}`);
      if (node.kind === 'unconnected' || (node.kind === 'step' && node.missing)) problems.push(own.get(node.id)!);
    }
    for (const edge of graph.edges) {
      lines.push(`    ${own.get(edge.from)} -->|${mermaidText(edgeLines(edge))}| ${own.get(edge.to)}`);
    }
    lines.push('  end');
  });
  if (problems.length) {
    lines.push('  classDef problem stroke:#c00,stroke-width:2px,stroke-dasharray:4 3', `  class ${problems.join(',')} problem`);
  }
  return `${lines.join('\n')}\n`;
}

// ---- Graphviz dot ------------------------------------------------------------------------------------------------

function dotString(lines: readonly string[]): string {
  return `"${lines.map((s) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, ' ')).join('\\n')}"`;
}

function dotNodeAttributes(node: GraphNode): string {
  const attributes = [`label=${dotString(nodeLines(node))}`];
  switch (node.kind) {
    case 'input':
    case 'output':
      attributes.push('shape=oval');
      break;
    case 'unconnected':
      attributes.push('shape=hexagon', 'style=dashed', 'color=red');
      break;
    default:
      attributes.push('shape=box', node.missing ? 'style="rounded,dashed", color=red' : 'style=rounded');
  }
  return attributes.join(', ');
}

export function renderDot(graphs: EnsembleGraph | readonly EnsembleGraph[]): string {
  const list = Array.isArray(graphs) ? (graphs as readonly EnsembleGraph[]) : [graphs as EnsembleGraph];
  const ids = identifiers(list);
  const name = list.length === 1 ? list[0]!.ensemble : 'ensembles';
  const lines = [
    `digraph ${dotString([name])} {`,
    '  rankdir=LR;',
    '  node [fontname="Helvetica", fontsize=11];',
    '  edge [fontname="Helvetica", fontsize=9];',
  ];
  list.forEach((graph, g) => {
    const own = ids.get(graph)!;
    lines.push(`  subgraph cluster_${g} {`, `    label=${dotString([graphTitle(graph)])};`);
    for (const node of graph.nodes) lines.push(`    ${own.get(node.id)} [${dotNodeAttributes(node)}];`);
    for (const edge of graph.edges) {
      lines.push(`    ${own.get(edge.from)} -> ${own.get(edge.to)} [label=${dotString(edgeLines(edge))}];`);
    }
    lines.push('  }');
  });
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
