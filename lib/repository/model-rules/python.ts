// §16 python backend: the module Triton imports has a TritonPythonModel attribute, whose class has execute.
// python_backend @ f9088ff src/pb_stub.cc:2043-2080 imports `<version>.<stem>` with the model and version
// directories on sys.path, then looks TritonPythonModel up as an attribute of that module (:565): a class defined
// here, imported (`from mymod import *`, `from x import Y as TritonPythonModel`) or assigned all serve. Only what is
// certain from the text is reported.

import { pythonSourceFacts } from '../io-completion';
import type { LoadedModel } from '../model';
import type { Reporter } from './reporter';

export function checkPythonModel(model: LoadedModel, r: Reporter, path: string, file: string) {
  const facts = pythonSourceFacts(model.files.readText(path));
  const source = facts.source;
  if (source === undefined) return;
  if (facts.definition === 'absent') {
    r.file('error', 'python-model-class', file, `${file} has no TritonPythonModel: nothing in it defines, imports or ` +
      `assigns that name, so the python backend fails the load with "AttributeError: module '...' has no attribute ` +
      "'TritonPythonModel'\". Define class TritonPythonModel with an execute(self, requests) method, or import it " +
      '(from my_module import TritonPythonModel).');
  } else if (facts.definition === 'class' && !/\bexecute\b/.test(source)) {
    // The load succeeds; every request then fails (pb_stub.cc:697-700).
    r.file('warning', 'python-model-execute', file, `Python model ${file} does not implement \`execute\` method: ` +
      'Triton loads it, but answers every request with that error. Add def execute(self, requests) returning one ' +
      'InferenceResponse per request.');
  }
}
