import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LINT_DIR_VARIABLE, lintRecordedTemplates, recordTemplate, startWhenRecorded, takeEarlyStart } from './cfn-lint';
import type { CfnLintProcess } from './cfn-lint';
import { itWithTools, scriptPython } from '../tools';
import { merge, ORACLES } from '../../scripts/record-oracle-answers';

const BROKEN_BUCKET = {
  Resources: { Bucket: { Type: 'AWS::S3::Bucket', Properties: { VersioningConfiguration: { Status: 'Sometimes' } } } },
};
const BROKEN_ALARM = {
  Resources: {
    Alarm: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: { Tags: [{ Key: 'a', Value: 'b' }], ComparisonOperator: 'x', EvaluationPeriods: 1 },
    },
  },
};
// Valid but for the Dashboard Tags cfn-lint's schema lags on.
const TAGGED_DASHBOARD = {
  Resources: { Board: { Type: 'AWS::CloudWatch::Dashboard', Properties: { DashboardBody: '{}', Tags: [{ Key: 'a', Value: 'b' }] } } },
};

/**
 * Runs `body` with the run's template directory set to a new one, as the global setup sets it, and cfn-lint's verdict
 * cache in a new directory beside it (`cache`), so that every test here lints as a clean clone does.
 */
async function withLintDir(body: (dir: string, cache: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mme-lint-test-'));
  const previous = { [LINT_DIR_VARIABLE]: process.env[LINT_DIR_VARIABLE], MME_CFN_LINT_CACHE: process.env.MME_CFN_LINT_CACHE };
  process.env[LINT_DIR_VARIABLE] = join(dir, 'templates');
  process.env.MME_CFN_LINT_CACHE = join(dir, 'cache');
  try {
    await body(join(dir, 'templates'), join(dir, 'cache'));
  } finally {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A cfn-lint console script beside `dir` whose python runs `onDriver` (shell) where it would start the harness's driver
 * (its code imports cfnlint.runner), answers `version` when asked for cfn-lint's version (the key of the cache) if one is
 * given, and runs the python of the real `cfnLint` script for anything else. Written again, it changes what the same
 * script runs.
 */
function cfnLintWithDriver(dir: string, cfnLint: string, onDriver: string, version?: string): { python: string; command: string } {
  const python = join(dir, '..', 'python');
  const command = join(dir, '..', 'cfn-lint');
  const real = scriptPython(cfnLint)!;
  const onVersion = version === undefined ? '' : ` *importlib.metadata*) echo ${version}; exit 0;;`;
  writeFileSync(python, `#!/bin/sh\ncase "$2" in *cfnlint.runner*) ${onDriver};;${onVersion} esac\nexec ${real} "$@"\n`, { mode: 0o755 });
  writeFileSync(command, `#!${python}\nfrom cfnlint.runner import main\nmain()\n`, { mode: 0o755 });
  return { python, command };
}

/**
 * cfn-lint with a stand-in for the harness's driver (no cfn-lint import, so no seconds of start-up), for the tests of
 * what the harness does with verdicts: an error in each template but one whose resource has empty Properties, under an
 * Id that differs each run, as cfn-lint's does (it hashes the file name in). Each start is a line in `starts`. Its
 * version is a stand-in's too (no python started to read cfn-lint's, 0.12 s of CPU each time a run opens the cache),
 * so its verdicts are kept under keys of their own.
 */
function standInCfnLint(dir: string, cfnLint: string, starts: string): { python: string; command: string } {
  const standIn = [
    'import json, os, re, sys, uuid',
    'def findings(files):',
    '    return [{"Filename": f, "Id": str(uuid.uuid4()), "Level": "Error", "Location": {"Path": ["Resources", "R"]},',
    '             "Message": "stand-in", "ParentId": None, "Rule": {"Id": "E3030"}}',
    '            for f in files if not re.search(r\'"Properties":\\s*\\{\\s*\\}\', open(f).read())]',
    'for line in sys.stdin:',
    '    r = json.loads(line)',
    '    if "file" in r:',
    '        found = findings([r["file"]])',
    '        print(json.dumps({"file": r["file"], "status": 2 if found else 0, "output": json.dumps(found)}), flush=True)',
    '        continue',
    '    for i, share in enumerate(r["shares"]):',
    '        open(os.path.join(r["out"], "%d.json" % i), "w").write(json.dumps(findings(share)))',
    '    print(json.dumps({"statuses": [2 if findings(share) else 0 for share in r["shares"]]}), flush=True)',
    '    break',
  ].join('\n');
  const driver = join(dir, '..', 'driver.py');
  writeFileSync(driver, standIn);
  return cfnLintWithDriver(dir, cfnLint, `echo driver >> ${starts}; exec ${scriptPython(cfnLint)!} ${driver}`, '0.0.0-stand-in');
}

/**
 * Records `templates` in the run's directory `dir` and lints them with `command`: while they come (`early`, as
 * startWhenRecorded does during the tests) or all at the end. The errors, as `name: rule path`, sorted.
 */
async function lintRun(dir: string, command: string, templates: Record<string, unknown>, early: boolean): Promise<string[]> {
  const started = early ? startWhenRecorded(dir, command) : undefined;
  for (const [name, template] of Object.entries(templates)) recordTemplate(name, template);
  if (started) await started;
  const errors = await lintRecordedTemplates(dir, command, 2, early ? takeEarlyStart() : undefined);
  return errors.map((e) => `${e.template.replace(/ \[.*/, '')}: ${e.rule} ${e.path}`).sort();
}

describe('the cfn-lint harness', () => {
  const title = 'starts cfn-lint at the first recorded template and lints while the tests run, splits what is left over runs at '
    + 'once, reports real errors under every name that recorded them, and leaves out only the exact findings its schema lags on';
  itWithTools(title, { tools: ['cfn-lint'] }, async (found) => {
    await withLintDir(async (dir) => {
      // Nothing recorded, nothing started.
      void startWhenRecorded(dir, found.paths['cfn-lint']!);
      expect(takeEarlyStart()).toBeUndefined();
      const started = startWhenRecorded(dir, found.paths['cfn-lint']!);
      recordTemplate('broken bucket', BROKEN_BUCKET);
      await started;
      const early = takeEarlyStart()!;
      expect(early).toBeDefined();
      // Recorded after the watching stopped: left for the runs the teardown starts.
      recordTemplate('broken alarm', BROKEN_ALARM);
      recordTemplate('tagged dashboard', TAGGED_DASHBOARD);
      recordTemplate('the same bucket again', JSON.parse(JSON.stringify(BROKEN_BUCKET)));
      const runs: Array<{ resources: string[]; output: string }> = [];
      const watched: CfnLintProcess = {
        ...early,
        lint: async (files, processes) => {
          const results = await early.lint(files, processes);
          for (const { files: linted, stdout } of results) {
            const resources = linted.flatMap((f) => Object.keys(JSON.parse(readFileSync(f, 'utf8')).Resources as object));
            runs.push({ resources, output: stdout });
          }
          return results;
        },
      };
      const errors = await lintRecordedTemplates(dir, found.paths['cfn-lint'], 2, watched);
      // The bucket linted on its own while "the tests ran", the other two in two runs at once (forked from the one
      // start), each run's errors under the names of their own template.
      expect(runs.map((run) => run.resources)).toEqual([['Bucket'], ['Alarm'], ['Board']]);
      // cfn-lint did report the Dashboard's Tags (E3002); the harness leaves out exactly that finding.
      expect(JSON.parse(runs[2]!.output)).toEqual([expect.objectContaining({ Rule: expect.objectContaining({ Id: 'E3002' }) })]);
      const at = (name: string) => errors.filter((e) => e.template.includes(name)).map((e) => `${e.rule} ${e.path}`);
      expect(at('broken bucket')).toEqual([expect.stringMatching(/^E\d+ Resources\/Bucket\/Properties\/VersioningConfiguration\/Status$/)]);
      expect(at('the same bucket again')).toEqual(at('broken bucket'));
      expect(errors.find((e) => e.path.endsWith('VersioningConfiguration/Status'))?.template).toMatch(
        /^broken bucket; the same bucket again \[[0-9a-f]{8}\]$/,
      );
      expect(at('broken alarm').length).toBeGreaterThan(0);
      expect(at('broken alarm').every((e) => / Resources\/Alarm/.test(e))).toBe(true);
      expect(at('tagged dashboard')).toEqual([]);
      expect(errors.length).toBe(at('broken bucket').length + at('broken alarm').length);
    });
  });

  itWithTools('keeps its verdicts between runs: a run over templates it has seen starts no cfn-lint and reports the same errors',
    { tools: ['cfn-lint'] }, async (found) => {
      await withLintDir(async (dir, cache) => {
        const starts = join(dir, '..', 'starts');
        const { python, command } = standInCfnLint(dir, found.paths['cfn-lint']!, starts);
        const driverStarts = () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0);
        const run = (templates: Record<string, unknown>, early: boolean) => {
          rmSync(dir, { recursive: true, force: true });
          return lintRun(dir, command, templates, early);
        };
        const templates = { 'broken bucket': BROKEN_BUCKET, 'broken alarm': BROKEN_ALARM, 'tagged dashboard': TAGGED_DASHBOARD };
        const first = await run(templates, false);
        expect(driverStarts()).toBe(1);
        const errors = ['broken alarm: E3030 Resources/R', 'broken bucket: E3030 Resources/R', 'tagged dashboard: E3030 Resources/R'];
        expect(first).toEqual(errors);
        expect(readdirSync(cache).filter((f) => f.endsWith('.json'))).toHaveLength(3);
        // Seen: the same errors, from the cache, whether the templates come during the run or at its end.
        expect(await run(templates, true)).toEqual(first);
        expect(await run(templates, false)).toEqual(first);
        expect(driverStarts()).toBe(1);
        // A template it has not seen is linted; the kept verdicts still count.
        const versioned = { Resources: { Bucket: { ...BROKEN_BUCKET.Resources.Bucket, Properties: {} } } };
        const changed = await run({ ...templates, 'broken bucket': versioned }, true);
        expect(driverStarts()).toBe(2);
        expect(changed).toEqual(first.filter((e) => !e.startsWith('broken bucket: ')));
        // Off: cfn-lint is started for templates it has judged (here a driver that fails at once: it was started), and
        // its python is started for nothing else (no version asked: no cache at all).
        process.env.MME_CFN_LINT_CACHE = 'off';
        writeFileSync(python, `#!/bin/sh\necho "$1" >> ${starts}.off\necho "started anyway" >&2\nexit 3\n`, { mode: 0o755 });
        await expect(run(templates, false)).rejects.toThrow(/cfn-lint failed \(exit 3\): started anyway/);
        expect(readFileSync(`${starts}.off`, 'utf8')).toBe('-c\n');
      });
    });

  itWithTools('answers from the recording in the repository, asks cfn-lint again about one recorded template a run, and fails ' +
    'when its verdict is not the recorded one', { tools: ['cfn-lint'] }, async (found) => {
    await withLintDir(async (dir, cache) => {
      const starts = join(dir, '..', 'starts');
      const { command } = standInCfnLint(dir, found.paths['cfn-lint']!, starts);
      const driverStarts = () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0);
      const recording = join(dir, '..', 'cfn-lint-answers.json');
      const stage = join(dir, '..', 'stage');
      // `early`: the templates come while the tests run and a recorded one is asked about again then (odds 1), or at the
      // end (odds 0); else they all come at the end.
      const run = (templates: Record<string, unknown>, early?: 'odds 1' | 'odds 0') => {
        process.env.MME_CFN_LINT_RECHECK_ODDS = early === 'odds 1' ? '1' : '0';
        rmSync(dir, { recursive: true, force: true });
        rmSync(cache, { recursive: true, force: true }); // a clean clone: nothing kept, only the recording
        return lintRun(dir, command, templates, early !== undefined);
      };
      const templates = { 'broken bucket': BROKEN_BUCKET, 'broken alarm': BROKEN_ALARM, 'tagged dashboard': TAGGED_DASHBOARD };
      const variables = ['MME_CFN_LINT_RECORDING', 'MME_ORACLE_RECORD', 'MME_ORACLE_RECHECK', 'MME_CFN_LINT_RECHECK_ODDS'] as const;
      const previous = variables.map((name) => process.env[name]);
      try {
        process.env.MME_CFN_LINT_RECORDING = recording;
        // Recorded as scripts/record-oracle-answers.js records: cfn-lint judges each template, the verdicts are staged.
        process.env.MME_ORACLE_RECORD = stage;
        const live = await run(templates);
        expect(driverStarts()).toBe(1);
        expect(live).toEqual(['broken alarm', 'broken bucket', 'tagged dashboard'].map((name) => `${name}: E3030 Resources/R`));
        expect(merge({ ...ORACLES.find((o) => o.name === 'cfn-lint')!, file: recording }, join(stage, 'cfn-lint'), false)).toBe(3);
        delete process.env.MME_ORACLE_RECORD;

        // Only the recording: the same errors, and cfn-lint not started.
        process.env.MME_ORACLE_RECHECK = '0';
        expect(await run(templates)).toEqual(live);
        expect(driverStarts()).toBe(1);
        // One recorded template judged again: cfn-lint started, the same errors.
        process.env.MME_ORACLE_RECHECK = '1';
        expect(await run(templates)).toEqual(live);
        expect(driverStarts()).toBe(2);
        expect(await run(templates, 'odds 1')).toEqual(live);
        expect(await run(templates, 'odds 0')).toEqual(live);
        expect(driverStarts()).toBe(4);

        // A recording that says otherwise: used as it is when nothing is asked again, caught when something is.
        const text = readFileSync(recording, 'utf8');
        expect(text).not.toMatch(/"status":0/); // an error in each: no verdict below is the driver's
        const cleared = text.replace(/^( +"[0-9a-f]{32}": ).*?(,?)$/gm, '$1{"findings":[],"status":0}$2');
        expect(cleared.match(/"status":0/g)).toHaveLength(3);
        writeFileSync(recording, cleared);
        process.env.MME_ORACLE_RECHECK = '0';
        expect(await run(templates)).toEqual([]);
        process.env.MME_ORACLE_RECHECK = '1';
        const differs = /cfn-lint's verdict on .* differs from the one recorded in .*cfn-lint-answers\.json/;
        await expect(run(templates)).rejects.toThrow(differs);
        await expect(run(templates, 'odds 1')).rejects.toThrow(differs);
        await expect(run(templates, 'odds 0')).rejects.toThrow(differs);
        expect(driverStarts()).toBe(7);
        // Off: every template linted again.
        process.env.MME_CFN_LINT_RECORDING = 'off';
        expect(await run(templates)).toEqual(live);
        expect(driverStarts()).toBe(8);
      } finally {
        variables.forEach((name, i) => (previous[i] === undefined ? delete process.env[name] : (process.env[name] = previous[i])));
      }
    });
  });

  itWithTools('keeps no verdict of a cfn-lint run that failed', { tools: ['cfn-lint'] }, async (found) => {
    await withLintDir(async (dir, cache) => {
      // The real python tells cfn-lint's version (so the cache is on); the driver is a stand-in that answers every
      // request as cfn-lint answers when it fails itself (exit status 1, no findings), or dies before answering.
      const answersFailure = [
        'import json, os, sys',
        'for line in sys.stdin:',
        '    r = json.loads(line)',
        '    if "file" in r:',
        '        print(json.dumps({"file": r["file"], "status": 1, "output": "[]"}), flush=True)',
        '        continue',
        '    for i in range(len(r["shares"])):',
        '        open(os.path.join(r["out"], "%d.json" % i), "w").write("[]")',
        '    print(json.dumps({"statuses": [1] * len(r["shares"])}), flush=True)',
        '    break',
      ].join('\n');
      const driver = join(dir, '..', 'driver.py');
      writeFileSync(driver, answersFailure);
      const real = scriptPython(found.paths['cfn-lint']!)!;
      const { command } = cfnLintWithDriver(dir, found.paths['cfn-lint']!, `exec ${real} ${driver}`);
      const started = startWhenRecorded(dir, command);
      recordTemplate('bucket', BROKEN_BUCKET); // linted while "the tests run"
      await started;
      const early = takeEarlyStart();
      recordTemplate('alarm', BROKEN_ALARM); // left for the teardown's shares
      await expect(lintRecordedTemplates(dir, command, 2, early)).rejects.toThrow(/cfn-lint failed \(exit 1\)/);
      expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([]);

      cfnLintWithDriver(dir, found.paths['cfn-lint']!, 'echo "no rules" >&2; exit 3');
      await expect(lintRecordedTemplates(dir, command, 2)).rejects.toThrow(/cfn-lint failed \(exit 3\): no rules/);
      expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([]);
    });
  });

  it('runs a cfn-lint that is not a python script as it is, once per share, and fails when it fails', async () => {
    await withLintDir(async (dir) => {
      // A stand-in cfn-lint (a wrapper, as a version manager's shim): one error per template it is given.
      const fake = join(dir, '..', 'cfn-lint');
      writeFileSync(
        fake,
        [
          '#!/bin/sh',
          'while [ "$1" != -- ]; do shift; done; shift',
          'echo "$#" >> "$0.runs"',
          '[ -e "$0.fail" ] && { echo "no schemas" >&2; exit 1; }',
          'sep="["; for f in "$@"; do',
          '  printf \'%s{"Filename":"%s","Level":"Error",\' "$sep" "$f"',
          '  printf \'"Rule":{"Id":"E3001"},"Location":{"Path":["Resources","X"]},"Message":"m"}\'',
          '  sep=","',
          'done; echo "]"; exit 2',
        ].join('\n'),
        { mode: 0o755 },
      );
      recordTemplate('bucket', BROKEN_BUCKET);
      recordTemplate('alarm', BROKEN_ALARM);
      const errors = await lintRecordedTemplates(dir, fake, 2);
      expect(errors.map((e) => e.template.replace(/ \[.*/, '')).sort()).toEqual(['alarm', 'bucket']);
      expect(errors.every((e) => e.rule === 'E3001' && e.path === 'Resources/X')).toBe(true);
      expect(readFileSync(`${fake}.runs`, 'utf8')).toBe('1\n1\n');
      writeFileSync(`${fake}.fail`, '');
      await expect(lintRecordedTemplates(dir, fake, 1)).rejects.toThrow(/cfn-lint failed \(exit 1\): no schemas/);
    });
  });

  it('fails, saying why, when the python of a cfn-lint script cannot start cfn-lint', async () => {
    await withLintDir(async (dir) => {
      // A python that has no cfn-lint (as a python3 without it would answer), named by a cfn-lint script's first line.
      const python = join(dir, '..', 'python3');
      writeFileSync(python, '#!/bin/sh\necho "ModuleNotFoundError: No module named \'cfnlint\'" >&2\nexit 1\n', { mode: 0o755 });
      writeFileSync(join(dir, '..', 'cfn-lint'), `#!${python}\nfrom cfnlint.runner import main\n`, { mode: 0o755 });
      recordTemplate('bucket', BROKEN_BUCKET);
      await expect(lintRecordedTemplates(dir, join(dir, '..', 'cfn-lint'), 2)).rejects.toThrow(
        /cfn-lint failed \(exit 1\): ModuleNotFoundError: No module named 'cfnlint'/,
      );
    });
  });
});
