// Reads what Triton's TensorFlow backend learns from a model file at load, without TensorFlow and without reading the
// weights: a GraphDef's node names and ops (its Placeholders are the potential inputs, every other node a potential
// output), and a SavedModel's meta graphs (tags) with their signatures (names, dtypes, shapes). Const nodes' tensors,
// function libraries and a SavedModel's graph_def are skipped by moving the file position. Field numbers are those of
// tensorflow/tensorflow tensorflow/core/framework/{graph,node_def,tensor_shape,types}.proto and
// tensorflow/core/protobuf/{saved_model,meta_graph}.proto. lib/repository/tensorflow-rules.ts applies the backend.

import {
  FileCursor,
  fields,
  int,
  messageEnd,
  string,
  WireError,
  type ByteSource,
} from './protobuf-wire';

/** tensorflow.DataType numbers (types.proto) the backend serves, with their DT_ names. */
export const TF_DATA_TYPES: Readonly<Record<number, string>> = {
  1: 'DT_FLOAT',
  2: 'DT_DOUBLE',
  3: 'DT_INT32',
  4: 'DT_UINT8',
  5: 'DT_INT16',
  6: 'DT_INT8',
  7: 'DT_STRING',
  8: 'DT_COMPLEX64',
  9: 'DT_INT64',
  10: 'DT_BOOL',
  11: 'DT_QINT8',
  12: 'DT_QUINT8',
  13: 'DT_QINT32',
  14: 'DT_BFLOAT16',
  15: 'DT_QINT16',
  16: 'DT_QUINT16',
  17: 'DT_UINT16',
  18: 'DT_COMPLEX128',
  19: 'DT_HALF',
  20: 'DT_RESOURCE',
  21: 'DT_VARIANT',
  22: 'DT_UINT32',
  23: 'DT_UINT64',
};

export interface GraphDefSummary {
  /** Names of the nodes whose op is Placeholder, in file order. */
  readonly placeholders: readonly string[];
  /** Names of every other node, in file order. */
  readonly otherNodes: readonly string[];
  readonly bytesRead: number;
}

/** One entry of a SignatureDef's inputs or outputs. */
export interface TfTensorInfo {
  /** The signature's key: the name Triton serves the tensor under. */
  readonly key: string;
  /** The graph tensor it stands for (`x:0`). */
  readonly tensorName: string;
  /** tensorflow.DataType number (0 when not given). */
  readonly dtype: number;
  /** Dimension sizes, -1 for unknown; empty for a scalar or an unknown rank (the backend reads both as rank 0). */
  readonly dims: readonly number[];
}

export interface TfSignature {
  readonly key: string;
  readonly methodName: string;
  readonly inputs: readonly TfTensorInfo[];
  readonly outputs: readonly TfTensorInfo[];
}

export interface TfMetaGraph {
  readonly tags: readonly string[];
  readonly signatures: readonly TfSignature[];
}

export interface SavedModelSummary {
  readonly metaGraphs: readonly TfMetaGraph[];
  readonly bytesRead: number;
}

export type TfReadResult<T> = { readonly ok: true; readonly model: T } | { readonly ok: false; readonly reason: string };

function guarded<T>(source: ByteSource, what: string, read: (c: FileCursor) => T): TfReadResult<T> {
  try {
    if (source.size === 0) return { ok: false, reason: 'is empty' };
    return { ok: true, model: read(new FileCursor(source)) };
  } catch (err) {
    if (err instanceof WireError) return { ok: false, reason: `is not ${what}: its protobuf encoding breaks off (${err.message})` };
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

/** Reads a GraphDef's nodes (name and op only). Never throws for what the file holds. */
export function readGraphDef(source: ByteSource): TfReadResult<GraphDefSummary> {
  return guarded(source, 'a TensorFlow GraphDef', (c) => {
    const placeholders: string[] = [];
    const otherNodes: string[] = [];
    fields(c, c.size, (field, wire) => {
      if (field !== 1) return false; // versions (4), library (2: functions), debug_info (5): skipped
      const end = messageEnd(c, wire, c.size);
      let name = '';
      let op = '';
      fields(c, end, (f, w) => {
        if (f === 1) name = string(c, w, end);
        else if (f === 2) op = string(c, w, end);
        else return false; // input, device, attr (Const tensors: the weights) are skipped unread
        return true;
      });
      (op === 'Placeholder' ? placeholders : otherNodes).push(name);
      return true;
    });
    return { placeholders, otherNodes, bytesRead: c.bytesRead };
  });
}

/** Reads a SavedModel's meta graphs: their tags and signatures; the graphs themselves are skipped. */
export function readSavedModel(source: ByteSource): TfReadResult<SavedModelSummary> {
  return guarded(source, 'a TensorFlow SavedModel', (c) => {
    const metaGraphs: TfMetaGraph[] = [];
    fields(c, c.size, (field, wire) => {
      if (field === 1) {
        int(c, wire, c.size); // saved_model_schema_version
        return true;
      }
      if (field !== 2) return false;
      metaGraphs.push(readMetaGraph(c, messageEnd(c, wire, c.size)));
      return true;
    });
    if (metaGraphs.length === 0) throw new WireError('no meta graph');
    return { metaGraphs, bytesRead: c.bytesRead };
  });
}

function readMetaGraph(c: FileCursor, end: number): TfMetaGraph {
  const tags: string[] = [];
  const signatures: TfSignature[] = [];
  fields(c, end, (field, wire) => {
    if (field === 1) {
      // MetaInfoDef: tags = 4
      const infoEnd = messageEnd(c, wire, end);
      fields(c, infoEnd, (f, w) => {
        if (f !== 4) return false;
        tags.push(string(c, w, infoEnd));
        return true;
      });
      return true;
    }
    if (field === 5) {
      // map<string, SignatureDef> signature_def: entries of key = 1, value = 2
      const entryEnd = messageEnd(c, wire, end);
      let key = '';
      let signature: Omit<TfSignature, 'key'> = { methodName: '', inputs: [], outputs: [] };
      fields(c, entryEnd, (f, w) => {
        if (f === 1) key = string(c, w, entryEnd);
        else if (f === 2) signature = readSignature(c, messageEnd(c, w, entryEnd));
        else return false;
        return true;
      });
      signatures.push({ key, ...signature });
      return true;
    }
    return false; // graph_def (2), saver_def, collection_def, asset_file_def, object_graph_def: skipped unread
  });
  return { tags, signatures };
}

function readSignature(c: FileCursor, end: number): Omit<TfSignature, 'key'> {
  const inputs: TfTensorInfo[] = [];
  const outputs: TfTensorInfo[] = [];
  let methodName = '';
  fields(c, end, (field, wire) => {
    if (field === 3) {
      methodName = string(c, wire, end);
      return true;
    }
    if (field !== 1 && field !== 2) return false;
    const entryEnd = messageEnd(c, wire, end);
    let key = '';
    let info: Omit<TfTensorInfo, 'key'> = { tensorName: '', dtype: 0, dims: [] };
    fields(c, entryEnd, (f, w) => {
      if (f === 1) key = string(c, w, entryEnd);
      else if (f === 2) info = readTensorInfo(c, messageEnd(c, w, entryEnd));
      else return false;
      return true;
    });
    (field === 1 ? inputs : outputs).push({ key, ...info });
    return true;
  });
  return { methodName, inputs, outputs };
}

function readTensorInfo(c: FileCursor, end: number): Omit<TfTensorInfo, 'key'> {
  let tensorName = '';
  let dtype = 0;
  let dims: number[] = [];
  fields(c, end, (field, wire) => {
    if (field === 1) tensorName = string(c, wire, end);
    else if (field === 2) dtype = int(c, wire, end);
    else if (field === 3) {
      // TensorShapeProto: dim = 2 (Dim: size = 1), unknown_rank = 3
      const shapeEnd = messageEnd(c, wire, end);
      dims = [];
      fields(c, shapeEnd, (f, w) => {
        if (f !== 2) return false;
        const dimEnd = messageEnd(c, w, shapeEnd);
        let size = 0;
        fields(c, dimEnd, (df, dw) => {
          if (df !== 1) return false;
          size = int(c, dw, dimEnd);
          return true;
        });
        dims.push(size);
        return true;
      });
    } else return false; // coo_sparse (4), composite_tensor (5): no dense tensor name
    return true;
  });
  return { tensorName, dtype, dims };
}
