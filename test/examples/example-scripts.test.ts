// The examples' scripts that only run on a GPU host with Docker (generate_model*.sh and the python exporters they
// call) are at least well-formed here: shellcheck-clean, syntactically valid python and executable; and every
// example has a README that examples/README.md lists.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { EXAMPLES_DIR } from './example-repositories';
import { itWithTools } from '../tools';

/** Top-level scripts of each example (not model.py files inside model directories). */
function scripts(extension: string): string[] {
  return readdirSync(EXAMPLES_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'existing-app')
    .flatMap((e) =>
      readdirSync(join(EXAMPLES_DIR, e.name))
        .filter((f) => f.endsWith(extension))
        .map((f) => join(EXAMPLES_DIR, e.name, f)),
    );
}

const shellScripts = scripts('.sh');
const pythonScripts = scripts('.py');
const name = (f: string) => relative(EXAMPLES_DIR, f);

describe('example scripts', () => {
  it('has a generate script for every seed example and build_model.py for the complete one', () => {
    expect(shellScripts.map(name).sort()).toEqual([
      'ensemble_dali_inception/generate_models.sh',
      'ensemble_hf/generate_models.sh',
      'resnet_pytorch/generate_model.sh',
      'resnet_tensorrt/generate_model.sh',
    ]);
    expect(pythonScripts.map(name)).toContain('sentiment_onnx/build_model.py');
  });

  it('has a README in every example, each listed in examples/README.md', () => {
    const index = readFileSync(join(EXAMPLES_DIR, 'README.md'), 'utf8');
    const examples = readdirSync(EXAMPLES_DIR, { withFileTypes: true }).filter((e) => e.isDirectory());
    for (const example of examples) {
      expect(index).toContain(`[\`${example.name}/\`]`);
      if (example.name !== 'existing-app') expect(existsSync(join(EXAMPLES_DIR, example.name, 'README.md'))).toBe(true);
    }
  });

  it.each([...shellScripts, ...pythonScripts].map((f) => [name(f), f]))('%s is executable', (_n, file) => {
    expect(statSync(file).mode & 0o111).not.toBe(0);
  });

  for (const file of shellScripts) {
    itWithTools(`${name(file)} passes shellcheck`, { tools: ['shellcheck'] }, (found) => {
      const run = spawnSync(found.paths.shellcheck!, [file], { encoding: 'utf8' });
      expect(run.stdout).toBe('');
      expect(run.status).toBe(0);
    });
  }

  for (const file of pythonScripts) {
    itWithTools(`${name(file)} is valid python`, { python: [] }, (found) => {
      const run = spawnSync(found.python!, ['-c', 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])', file], {
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
    });
  }
});
