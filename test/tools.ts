// The machine tools some tests need, found once per run, and the one rule for every test that needs one: outside CI a
// missing tool skips the test, naming what to install; under CI=true (.ci/run installs them all) it fails.
// Tools are looked up on PATH only (MME_DEPLOY_TEST_PYTHON may name a python3), never at one machine's paths.

import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';

/** Python modules the tests import, by their import name. */
export type PythonModule = 'numpy' | 'onnx' | 'google.protobuf' | 'botocore' | 'torch';
export type ToolName = 'python3' | 'protoc' | 'shellcheck' | 'bsdtar' | 'cfn-lint';

/** How to install each tool and module on Debian/Ubuntu (what .ci/run installs). */
export const INSTALL: Readonly<Record<ToolName | PythonModule, string>> = {
  python3: 'apt-get install python3',
  numpy: 'apt-get install python3-numpy',
  onnx: 'apt-get install python3-onnx',
  'google.protobuf': 'apt-get install python3-protobuf',
  botocore: 'apt-get install python3-botocore',
  torch: 'apt-get install python3-torch',
  protoc: 'apt-get install protobuf-compiler',
  shellcheck: 'apt-get install shellcheck',
  bsdtar: 'apt-get install libarchive-tools',
  'cfn-lint': 'pip install cfn-lint==1.51.0',
};

const PYTHON_MODULES: readonly PythonModule[] = ['numpy', 'onnx', 'google.protobuf', 'botocore', 'torch'];
const TOOL_NAMES: readonly ToolName[] = ['python3', 'protoc', 'shellcheck', 'bsdtar', 'cfn-lint'];

/** What the run found: each tool's path, and each python3 with the modules it imports. */
export interface ToolInventory {
  readonly tools: Partial<Record<ToolName, string>>;
  readonly pythons: ReadonlyArray<{ readonly path: string; readonly modules: readonly PythonModule[] }>;
}

/** The environment variable holding the run's inventory (set by the global setup, so workers do not probe again). */
export const INVENTORY_VARIABLE = 'MME_TEST_TOOLS';
/** The file where skipped tests record the tool they missed, for the run's closing summary. */
export const SKIP_LOG_VARIABLE = 'MME_TEST_SKIP_LOG';
/** NODE_EXTRA_CA_CERTS as the run found it, for npm only (test/global-setup.ts setAsideExtraCaCerts). */
export const EXTRA_CA_VARIABLE = 'MME_TEST_NODE_EXTRA_CA_CERTS';

/** Every executable called `name` on `path`, in order. */
export function onPath(name: string, path = process.env.PATH ?? ''): string[] {
  const found: string[] = [];
  for (const dir of path.split(delimiter)) {
    const candidate = dir && join(dir, name);
    try {
      if (candidate && existsSync(candidate) && (statSync(candidate).mode & 0o111) !== 0) found.push(candidate);
    } catch {
      // an unreadable directory on PATH holds nothing we can run
    }
  }
  return found;
}

const PROBE = `
import importlib.util, json, sys
def has(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False
print(json.dumps({"executable": sys.executable, "modules": [m for m in sys.argv[1:] if has(m)]}))
`;

/**
 * Looks for every tool on `env.PATH`. Each python3 (MME_DEPLOY_TEST_PYTHON first, then each on PATH) is resolved to
 * the interpreter itself (a version manager's shim costs a second per start) and asked which modules it has.
 */
export function probeTools(env: NodeJS.ProcessEnv = process.env): ToolInventory {
  const tools: Partial<Record<ToolName, string>> = {};
  for (const name of TOOL_NAMES) {
    const found = onPath(name, env.PATH)[0];
    if (found) tools[name] = found;
  }
  const pythons: Array<{ path: string; modules: PythonModule[] }> = [];
  const candidates = [env.MME_DEPLOY_TEST_PYTHON, ...onPath('python3', env.PATH)].filter((p): p is string => Boolean(p));
  // One start per interpreter: /bin/python3 and /usr/bin/python3 are one where /bin links to usr/bin. Only the
  // directory is resolved: a venv's python3 links to the system's file, yet is another python (its own site-packages).
  const files = new Set<string>();
  for (const candidate of new Set(candidates)) {
    const file = join(realDirectory(dirname(candidate)), basename(candidate));
    if (files.has(file)) continue;
    files.add(file);
    const run = spawnSync(candidate, ['-c', PROBE, ...PYTHON_MODULES], { encoding: 'utf8', timeout: 60_000, env });
    if (run.status !== 0) continue;
    try {
      const answer = JSON.parse(run.stdout) as { executable: string; modules: PythonModule[] };
      const path = answer.executable || candidate;
      if (!pythons.some((p) => p.path === path)) pythons.push({ path, modules: answer.modules });
    } catch {
      // not a python3 we can use
    }
  }
  if (pythons.length > 0) tools.python3 = pythons[0]!.path;
  const script = tools['cfn-lint'] && pythons[0] ? consoleScriptOf(tools['cfn-lint'], pythons[0].path) : undefined;
  if (script) tools['cfn-lint'] = script;
  return { tools, pythons };
}

/**
 * The python console script a PATH entry `found` stands for, when `found` is a version manager's shim (pyenv's is a
 * bash script that runs `pyenv exec`, about 0.6 s of CPU per start on a loaded 2-core VM; cfn-lint starts twice
 * a run) and pip installed the script beside the python3 PATH gives (the python the shim's version manager picks):
 * the same program without the shim. Undefined when `found` is itself a script a python runs, or nothing is there.
 */
function consoleScriptOf(found: string, python: string): string | undefined {
  const runByPython = (file: string) => scriptPython(file) !== undefined;
  if (runByPython(found)) return undefined;
  const beside = join(dirname(python), basename(found));
  return beside !== found && onPath(basename(found), dirname(python)).length > 0 && runByPython(beside) ? beside : undefined;
}

/** The python a script's `#!` line names (`#!/path/to/python3`, what pip writes for a console script), or undefined. */
export function scriptPython(file: string): string | undefined {
  try {
    return /^#!\s*(\/\S*\/python[\d.]*)(\s|$)/.exec(readFileSync(file, 'utf8').slice(0, 256))?.[1];
  } catch {
    return undefined;
  }
}

function realDirectory(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

let inventory: ToolInventory | undefined;

/** The run's inventory: the global setup's, or probed now (once per process). */
export function toolInventory(): ToolInventory {
  if (!inventory) {
    const recorded = process.env[INVENTORY_VARIABLE];
    inventory = recorded ? (JSON.parse(recorded) as ToolInventory) : probeTools();
  }
  return inventory;
}

/** What a test needs: machine tools, and python modules (which imply python3). */
export interface Needs {
  readonly tools?: readonly ToolName[];
  readonly python?: readonly PythonModule[];
}

/** What a test found: the tools' paths and the python3 to use; or why it cannot run and what to install. */
export type Found =
  | { readonly ok: true; readonly paths: Partial<Record<ToolName, string>>; readonly python?: string }
  | { readonly ok: false; readonly reason: string; readonly install: readonly string[] };

/** Finds what `needs` names in `found` (the run's inventory by default). */
export function findTools(needs: Needs, found: ToolInventory = toolInventory()): Found {
  const missing: string[] = [];
  const install: string[] = [];
  const paths: Partial<Record<ToolName, string>> = {};
  for (const name of needs.tools ?? []) {
    const path = found.tools[name];
    if (path) paths[name] = path;
    else {
      missing.push(name);
      install.push(INSTALL[name]);
    }
  }
  let python: string | undefined;
  if (needs.python) {
    const modules = needs.python;
    python = found.pythons.find((p) => modules.every((m) => p.modules.includes(m)))?.path;
    if (!python) {
      if (found.pythons.length === 0) {
        missing.push('python3');
        install.push(INSTALL.python3);
      }
      const absent = modules.filter((m) => !found.pythons.some((p) => p.modules.includes(m)));
      // Each module is somewhere but not all in one python3: name them all, so one install puts them together.
      const name = (absent.length > 0 ? absent : modules).join(', ');
      missing.push(`a python3 that imports ${modules.join(', ')}`);
      install.push(...(absent.length > 0 ? absent : modules).map((m) => INSTALL[m]));
      if (found.pythons.length > 0) install.push(`or set MME_DEPLOY_TEST_PYTHON to a python3 with ${name}`);
    }
  }
  if (missing.length > 0) return { ok: false, reason: `needs ${missing.join(', ')}`, install: [...new Set(install)] };
  return python ? { ok: true, paths, python } : { ok: true, paths };
}

/** True when the run is CI's (.ci/run sets CI=true and installs every tool). */
export function underCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/** The one-line message for a missing tool: what the test needs and the command that installs it. */
export function missingMessage(found: Extract<Found, { ok: false }>): string {
  return `${found.reason} (install: ${found.install.join('; ')})`;
}

function recordSkip(title: string, found: Extract<Found, { ok: false }>): void {
  const log = process.env[SKIP_LOG_VARIABLE];
  if (!log) return;
  try {
    appendFileSync(log, `${JSON.stringify({ title, reason: found.reason, install: found.install })}\n`);
  } catch {
    // the summary is a courtesy; the skipped test's own title already says why
  }
}

/**
 * `describe(title, body)` when `needs` is met (body gets the paths and python3); otherwise, outside CI, one skipped
 * test whose title says what to install, and under CI one failing test that says what is missing.
 */
export function describeWithTools(title: string, needs: Needs, body: (found: Extract<Found, { ok: true }>) => void): void {
  const found = findTools(needs);
  if (found.ok) {
    describe(title, () => body(found));
    return;
  }
  describe(title, () => missingTest('every test here', found));
}

/** `it(title, fn)` when `needs` is met; otherwise skipped (outside CI) or failing (under CI), as describeWithTools. */
export function itWithTools(
  title: string,
  needs: Needs,
  fn: ((found: Extract<Found, { ok: true }>) => void) | ((found: Extract<Found, { ok: true }>) => Promise<void>),
  timeout?: number,
): void {
  const found = findTools(needs);
  if (found.ok) it(title, async () => fn(found), timeout);
  else missingTest(title, found);
}

function missingTest(title: string, found: Extract<Found, { ok: false }>): void {
  const message = missingMessage(found);
  if (underCi()) {
    it(title, () => {
      throw new Error(`${message}: CI installs every tool the tests use (.ci/run), so a missing one is a failure`);
    });
  } else {
    recordSkip(title, found);
    it.skip(`${title} — skipped: ${message}`, () => undefined);
  }
}

type TestFn = (title: string, fn: (() => void) | (() => Promise<void>), timeout?: number) => void;

/** `it` when `needs` is met; otherwise a function that registers the rule's skipped or failing test in its place. */
export function testFor(needs: Needs): TestFn {
  const found = findTools(needs);
  if (found.ok) return it;
  return (title) => missingTest(title, found);
}

/** `describe` when `needs` is met; otherwise one skipped (outside CI) or failing (under CI) test in its place. */
export function suiteFor(needs: Needs): (title: string, body: () => void) => void {
  const found = findTools(needs);
  if (found.ok) return describe;
  return (title) => describe(title, () => missingTest('every test here', found));
}

/** The python3 that imports every module in `modules`, or undefined. */
export function pythonWith(modules: readonly PythonModule[]): string | undefined {
  const found = findTools({ python: modules });
  return found.ok ? found.python : undefined;
}

/**
 * `describe` unless `problem` names something this machine lacks (not a tool: a permission, a setting); then the
 * same rule as for a missing tool.
 */
export function suiteUnless(
  problem: { readonly reason: string; readonly install: readonly string[] } | undefined,
): (title: string, body: () => void) => void {
  if (!problem) return describe;
  const found = { ok: false as const, reason: problem.reason, install: problem.install };
  return (title) => describe(title, () => missingTest('every test here', found));
}
