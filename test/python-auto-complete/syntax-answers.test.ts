// A --run-python session's model.py syntax check answers file by file (lib/python-auto-complete/run.ts
// syntaxCheckRunner): a file it checked once, in any repository, is not parsed again, so validating many repositories
// made from one template forks no process per repository. The verdicts must stay those of a python of its own.

import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AutoCompleteSession } from '../../lib/python-auto-complete/run';
import { validateRepository } from '../../lib/repository/validate';
import { makeRepo, removeRepos } from '../repository/repo-builder';
import { pythonWith, suiteFor } from '../tools';

afterAll(removeRepos);

const python = pythonWith([]) ?? 'python3';
const PY = 'backend: "python"';
const GOOD = 'class TritonPythonModel:\n    pass\n';
const BAD = 'def f(:\n    pass\n';
/** Kills the session's python when it runs there (forked by auto_complete_server.py), as a model may. */
const KILLS_SERVER = `import os
with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
    if b"auto_complete_server.py" in f.read():
        os.kill(os.getppid(), 9)
${GOOD}`;

/** A repository of python models, name -> model.py text. */
const repoOf = (models: Record<string, string>) =>
  makeRepo(Object.fromEntries(Object.entries(models).flatMap(([m, text]) => [[`${m}/config.pbtxt`, PY], [`${m}/1/model.py`, text]])));
const syntaxOf = (report: { diagnostics: { code: string }[] }) => report.diagnostics.filter((d) => d.code === 'python-syntax');
/** The oracle: the diagnostics a check in a python of its own gives. */
const ownVerdicts = async (repo: string) => syntaxOf(await validateRepository(repo, { pythonSyntax: { python } }));

suiteFor({ python: [] })("a session's syntax answers, file by file", () => {
  it('answers files it checked, under any name, with no process; parses only the new ones; a fault only under its name', async () => {
    const dir = makeRepo({ 'bin/': null });
    const log = join(dir, 'starts');
    const counting = join(dir, 'bin', 'python3');
    writeFileSync(counting, `#!/bin/sh\necho started >> '${log}'\nexec '${python}' "$@"\n`);
    chmodSync(counting, 0o755);
    const named = process.env.MME_DEPLOY_PYTHON;
    const session = AutoCompleteSession.open({ python });
    try {
      const first = repoOf({ a: GOOD, b: BAD });
      const verdicts = syntaxOf(await validateRepository(first, { pythonSyntax: { session } }));
      expect(verdicts).toEqual([expect.objectContaining({ model: 'b', file: 'b/1/model.py', line: 1 })]);
      expect(verdicts).toEqual(await ownVerdicts(first));
      // Known and new files in one check, in an order of their own: each verdict at its own file.
      const mixed = repoOf({ a: GOOD, b: BAD, c: `${GOOD}# c\n`, d: 'def g(:\n', e: GOOD, f: 'x = (\n' });
      const mixedVerdicts = syntaxOf(await validateRepository(mixed, { pythonSyntax: { session } }));
      expect(mixedVerdicts.map((d) => (d as { model?: string }).model)).toEqual(['b', 'd', 'f']);
      expect(mixedVerdicts).toEqual(await ownVerdicts(mixed));

      // With its python gone (a model killed it), a check of its own would start the python MME_DEPLOY_PYTHON names.
      await validateRepository(repoOf({ k: KILLS_SERVER }), { runPython: { session } });
      process.env.MME_DEPLOY_PYTHON = counting;
      // Every file known: bytes that compiled, under other names, and a fault under its own name. No python started.
      const known = repoOf({ x: GOOD, y: `${GOOD}# c\n`, b: BAD });
      expect(syntaxOf(await validateRepository(known, { pythonSyntax: { session } }))).toEqual(await ownVerdicts(known));
      expect(existsSync(log)).toBe(false);
      // A fault's message may name its file: the same bytes under another name are checked again, here in a python of
      // the check's own, which gives the same verdict.
      const renamed = repoOf({ x: GOOD, z: BAD });
      const renamedVerdicts = syntaxOf(await validateRepository(renamed, { pythonSyntax: { session } }));
      expect(renamedVerdicts).toEqual([expect.objectContaining({ model: 'z', file: 'z/1/model.py', line: 1 })]);
      expect(renamedVerdicts).toEqual(await ownVerdicts(renamed));
      expect(readFileSync(log, 'utf8')).toBe('started\n');
    } finally {
      await session.close();
      if (named === undefined) delete process.env.MME_DEPLOY_PYTHON;
      else process.env.MME_DEPLOY_PYTHON = named;
    }
  });

  it('answers each file of a check in which the same new source comes twice at its own place', async () => {
    const session = AutoCompleteSession.open({ python });
    try {
      // Never seen before: a and b the same bytes, then a fault (the answer of the file after a twice must not be
      // taken from the one before it).
      const twice = repoOf({ a: `${GOOD}# twice\n`, b: `${GOOD}# twice\n`, c: 'def h(:\n', d: `${GOOD}# d\n`, e: 'y = [\n' });
      const verdicts = syntaxOf(await validateRepository(twice, { pythonSyntax: { session } }));
      expect(verdicts.map((d) => (d as { model?: string }).model)).toEqual(['c', 'e']);
      expect(verdicts).toEqual(await ownVerdicts(twice));
    } finally {
      await session.close();
    }
  });
});
