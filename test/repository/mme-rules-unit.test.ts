// The SageMaker MME archive rules (lib/repository/mme-rules.ts) called directly on small repositories: discovery and
// the rules only, no model file parsed, no python started, so each test takes milliseconds (the mutation suite runs
// this file for every mutant of the module). test/repository/mme-rules.test.ts checks the same rules through
// validateRepository, whole repositories at a time.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { Readable } from 'node:stream';
import { diagnostic, type Diagnostic } from '../../lib/diagnostics';
import { discoverModels, type Discovery } from '../../lib/repository/discover';
import {
  checkMmeArchive,
  defaultTargetModel,
  holdsActivate,
  LARGE_ENV_BYTES,
  leftOutOfTheArchive,
  loadedModel,
  MME_MODEL_WARNING_THRESHOLD,
  outsideTheLoad,
  reachedFrom,
  SAGEMAKER_ENSEMBLE_PATTERN,
  TARGET_MODEL_MAX_LENGTH,
  targetModelNameProblem,
  targetModelProblems,
  type MmeArchiveOptions,
} from '../../lib/repository/mme-rules';
import { directoryMember, fileMember, gzipOf, tarOf } from '../archive/crafted-archives';
import { makeRepo, removeRepos, type RepoFiles } from './repo-builder';

afterAll(removeRepos);

const python = (name: string, extra = '') => ({
  [`${name}/config.pbtxt`]: `name: "${name}" backend: "python"${extra}`,
  [`${name}/1/model.py`]: 'x',
});
const onnx = (name: string, extra = '') => ({
  [`${name}/config.pbtxt`]: `name: "${name}" backend: "onnxruntime"${extra}`,
  [`${name}/1/model.onnx`]: 'x',
});
/** An ensemble whose steps name `steps`; `platform` as written in its config.pbtxt. */
const ensemble = (name: string, steps: readonly string[], platform = 'platform: "ensemble"') => ({
  [`${name}/config.pbtxt`]:
    `name: "${name}" ${platform}\nensemble_scheduling { step [ ${steps.map((s) => `{ model_name: "${s}" }`).join(', ')} ] }`,
  [`${name}/1/`]: null,
});
/** An ensemble that SageMaker's textual match misses (a space before the colon). */
const unmatchedEnsemble = (name: string, steps: readonly string[]) => ensemble(name, steps, 'platform : "ensemble"');
/** pre (python) and net (onnx) composed by ensemble `ens`: the archive SageMaker loads as intended. */
const pipeline = (): RepoFiles => ({ ...python('pre'), ...onnx('net'), ...ensemble('ens', ['pre', 'net']) });
const decoupled = '\nmodel_transaction_policy { decoupled: true }';

function discover(files: RepoFiles, sub = ''): Discovery {
  return discoverModels(join(makeRepo(files), sub));
}

async function check(files: RepoFiles, targetModel = 'm.tar.gz', options?: MmeArchiveOptions): Promise<Diagnostic[]> {
  return checkMmeArchive(discover(files), targetModel, options);
}

/** A tar.gz of `entries` (a null value makes a directory), each written with `prefix` in front ('./' as conda-pack). */
function tarGzOf(entries: Record<string, string | null>, prefix = './'): Buffer {
  const src = mkdtempSync(join(tmpdir(), 'mme-env-'));
  try {
    for (const [entry, content] of Object.entries(entries)) {
      if (content === null) mkdirSync(join(src, entry), { recursive: true });
      else {
        mkdirSync(join(src, entry, '..'), { recursive: true });
        writeFileSync(join(src, entry), content);
      }
    }
    return execFileSync('tar', ['-cz', '--no-recursion', '-C', src, ...Object.keys(entries).map((e) => `${prefix}${e}`)]);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}
const codes = (diagnostics: readonly Diagnostic[]) => diagnostics.map((d) => `${d.severity}:${d.code}:${d.file}`);

describe('loadedModel: the model SageMaker registers under the TargetModel name', () => {
  it('is the only model of the archive, ensemble or not, laid out as a repository or as one model directory', () => {
    expect(loadedModel(discover(onnx('net')))?.name).toBe('net');
    expect(loadedModel(discover(onnx('net'), 'net'))?.name).toBe('net');
  });

  it('is the one config that matches the textual pattern, even one that is not an ensemble (a comment matches)', () => {
    expect(loadedModel(discover(pipeline()))?.name).toBe('ens');
    // SageMaker's scan matches text, not fields: the commented model is the one it registers.
    const commented = { ...python('pre', '\n# platform: "ensemble"'), ...onnx('net'), ...unmatchedEnsemble('ens', ['pre', 'net']) };
    expect(loadedModel(discover(commented))?.name).toBe('pre');
  });

  it('is the one top-level ensemble when no config matches or several do, and none when that is not one', () => {
    const unmatched = { ...python('pre'), ...onnx('net'), ...ensemble('ens', ['pre', 'net'], 'platform : "ensemble"') };
    expect(loadedModel(discover(unmatched))?.name).toBe('ens');
    // Both match; the outer one runs the inner one, so only the outer one is top-level.
    const nested = { ...pipeline(), ...ensemble('outer', ['ens']) };
    expect(loadedModel(discover(nested))?.name).toBe('outer');
    expect(loadedModel(discover({ ...python('pre'), ...onnx('net') }))).toBeUndefined();
    expect(loadedModel(discover({ ...pipeline(), ...ensemble('other', ['pre']) }))).toBeUndefined();
  });

  it('matches SageMaker\'s pattern: any whitespace between the colon and the quoted "ensemble", nothing before the colon', () => {
    for (const text of ['platform:"ensemble"', 'platform: "ensemble"', 'platform:\t \n"ensemble"', 'x platform: "ensemble" y']) {
      expect(SAGEMAKER_ENSEMBLE_PATTERN.test(text)).toBe(true);
    }
    const misses = ['platform : "ensemble"', "platform: 'ensemble'", 'platform: ensemble', 'platform: "ensembles', 'platform "ensemble"'];
    for (const text of misses) {
      expect(SAGEMAKER_ENSEMBLE_PATTERN.test(text)).toBe(false);
    }
  });
});

describe('defaultTargetModel', () => {
  it('names the archive after the directory, a trailing separator or not, and "model" for the root', () => {
    expect(defaultTargetModel(join(sep, 'data', 'resnet'))).toBe('resnet.tar.gz');
    expect(defaultTargetModel(`${join(sep, 'data', 'resnet')}${sep}`)).toBe('resnet.tar.gz');
    expect(defaultTargetModel(sep)).toBe('model.tar.gz');
  });
});

describe('targetModelNameProblem: a name push, list and remove all accept', () => {
  const triton = (name: string) =>
    `Triton refuses it ("invalid model name '${name}', model name must not contain path traversal characters")`;

  it('refuses an empty or blank name, which would name the endpoint\'s prefix', () => {
    for (const name of ['', '  ', '\t']) {
      expect(targetModelNameProblem(name)).toBe(
        `TargetModel '${name}' is empty: it would name the endpoint's S3 prefix itself. Give the name \`mme-deploy list\` shows.`,
      );
    }
  });

  it('refuses the path segments . and .., and names holding a slash, with the flat name to use instead', () => {
    expect(targetModelNameProblem('.')).toBe(`TargetModel '.' is a path segment, not a name; ${triton('.')}.`);
    expect(targetModelNameProblem('..')).toBe(`TargetModel '..' is a path segment, not a name; ${triton('..')}.`);
    expect(targetModelNameProblem('models/v2/a.tar.gz')).toBe(
      `TargetModel 'models/v2/a.tar.gz' contains '/': ${triton('models/v2/a.tar.gz')}. Use a flat name such as 'a.tar.gz'.`,
    );
    expect(targetModelNameProblem('...')).toBeUndefined();
  });

  it('refuses control characters and backslashes, from U+0000 to U+001F and U+007F', () => {
    for (const name of ['a\u0000.tar.gz', 'a\u001f.tar.gz', 'a\u007f.tar.gz', 'a\\b.tar.gz', 'a\n']) {
      expect(targetModelNameProblem(name)).toBe(
        `TargetModel '${name}' contains control characters or a backslash; use letters, digits, '.', '-' and '_'.`,
      );
    }
  });

  it('refuses more than 1024 characters, showing the first 40', () => {
    const long = `${'abcdefghij'.repeat(102)}.tar.gz`;
    expect(targetModelNameProblem(long)).toBe(
      `TargetModel '${long.slice(0, 40)}...' is 1027 characters; SageMaker takes at most 1024. Choose a shorter name.`,
    );
    expect(TARGET_MODEL_MAX_LENGTH).toBe(1024);
    expect(targetModelNameProblem('a'.repeat(1024))).toBeUndefined();
    expect(targetModelNameProblem('a'.repeat(1025))).toMatch(/^TargetModel 'a{40}\.\.\.' is 1025 characters;/);
  });

  it('refuses a leading space and any character outside printable ASCII, wherever it stands, naming it', () => {
    const rest = ': SageMaker takes only printable ASCII in a TargetModel (its pattern \\A\\S[\\p{Print}]*\\z) and refuses the ' +
      "invoke. Use letters, digits, '.', '-' and '_'.";
    expect(targetModelNameProblem(' a.tar.gz')).toBe(`TargetModel ' a.tar.gz' starts with a space${rest}`);
    expect(targetModelNameProblem('è.tar.gz')).toBe(`TargetModel 'è.tar.gz' contains 'è'${rest}`);
    expect(targetModelNameProblem('a.tar.gzè')).toBe(`TargetModel 'a.tar.gzè' contains 'è'${rest}`);
    expect(targetModelNameProblem('a b\u00a0c')).toBe(`TargetModel 'a b\u00a0c' contains '\u00a0'${rest}`);
    expect(targetModelNameProblem(' è')).toBe(`TargetModel ' è' starts with a space${rest}`);
    expect(targetModelNameProblem('a😀')).toBe(`TargetModel 'a😀' contains '😀'${rest}`);
  });

  it('accepts printable ASCII from ! to ~, spaces after the first character', () => {
    for (const name of ['!', '~', 'a b', 'a ', '~ !', 'x~!@#$%^&()=+[]{};,.tar.gz', 'A-Z_0.9']) {
      expect(targetModelNameProblem(name)).toBeUndefined();
    }
  });
});

describe('targetModelProblems: the name push uploads', () => {
  it('passes a name problem through unchanged', () => {
    expect(targetModelProblems('a/b.tar.gz')).toBe(targetModelNameProblem('a/b.tar.gz'));
    expect(targetModelProblems('')).toBe(targetModelNameProblem(''));
  });

  it('requires .tar.gz after a name, and suggests the name with its archive suffix replaced', () => {
    const message = (name: string, use: string) =>
      `TargetModel '${name}' must end in '.tar.gz': SageMaker downloads and extracts it as a gzip tarball. Use '${use}'.`;
    expect(targetModelProblems('model.tgz')).toBe(message('model.tgz', 'model.tar.gz'));
    expect(targetModelProblems('model.tar')).toBe(message('model.tar', 'model.tar.gz'));
    expect(targetModelProblems('model.gz')).toBe(message('model.gz', 'model.tar.gz'));
    expect(targetModelProblems('model.zip')).toBe(message('model.zip', 'model.zip.tar.gz'));
    expect(targetModelProblems('model.tgz.bak')).toBe(message('model.tgz.bak', 'model.tgz.bak.tar.gz'));
    expect(targetModelProblems('model.tar.gz.1')).toBe(message('model.tar.gz.1', 'model.tar.gz.1.tar.gz'));
    expect(targetModelProblems('.tar.gz')).toBe(message('.tar.gz', '.tar.tar.gz'));
    expect(targetModelProblems('model.tar.gz')).toBeUndefined();
    expect(targetModelProblems('a.tar.gz')).toBeUndefined();
  });
});

describe('checkMmeArchive', () => {
  it('accepts an ensemble with its composing models, and one model alone as a repository or a model directory', async () => {
    expect(await check(pipeline())).toEqual([]);
    expect(await check(onnx('net'))).toEqual([]);
    expect(await checkMmeArchive(discover(onnx('net'), 'net'), 'resnet.tar.gz')).toEqual([]);
  });

  it('reports a TargetModel name SageMaker refuses at the archive root', async () => {
    expect(await check(onnx('net'), 'model.zip')).toEqual([
      diagnostic('error', 'mme-target-model-name', targetModelProblems('model.zip')!, { file: '.' }),
    ]);
  });

  it('refuses several model directories without an ensemble, naming the first five', async () => {
    const message = (count: number, listed: string, loads = 'whichever directory readdir lists last, which is arbitrary') =>
      `The archive holds ${count} model directories (${listed}) and no ensemble: SageMaker loads ${loads}. Package one ` +
      'model per archive, or add an ensemble (platform: "ensemble") that composes them.';
    expect(await check({ ...python('pre'), ...onnx('net') })).toEqual([
      diagnostic('error', 'mme-no-ensemble', message(2, 'net, pre'), { file: '.' }),
    ]);
    // A comment matching the pattern is no ensemble, but it decides what SageMaker loads: the one finding says which
    // (not also that 'net' is "not a step of ensemble 'pre'", as it did: 'pre' has no steps).
    const pattern = 'its ensemble pattern \'platform:\\s*"ensemble"\' although it is no ensemble (a comment, say)';
    expect(await check({ ...python('pre', '\n# platform: "ensemble"'), ...onnx('net') })).toEqual([
      diagnostic('error', 'mme-no-ensemble', message(2, 'net, pre', `'pre' alone, since its config.pbtxt matches ${pattern}`), {
        file: '.',
      }),
    ]);
    const comments = { ...python('pre', '\n# platform: "ensemble"'), ...onnx('net', '\n# platform:"ensemble"'), ...onnx('x') };
    expect(await check(comments)).toEqual([
      diagnostic(
        'error',
        'mme-no-ensemble',
        message(3, 'net, pre, x', `whichever of 'net', 'pre' readdir lists last, since each config.pbtxt matches ${pattern}`),
        { file: '.' },
      ),
    ]);
    const five: RepoFiles = {};
    for (const n of ['a', 'b', 'c', 'd', 'e']) Object.assign(five, onnx(n));
    expect((await check(five)).map((d) => d.message)).toEqual([message(5, 'a, b, c, d, e')]);
    const seven = { ...five, ...onnx('f'), ...onnx('g') };
    const found = await check(seven);
    expect(found.map((d) => d.message)).toEqual([
      message(7, 'a, b, c, d, e and 2 more'),
      'The archive holds 7 model directories; SageMaker\'s Triton loader warns above 5 and recommends smaller ' +
        'ensembles for better memory management (every model loads into GPU memory on each cold start).',
    ]);
    expect(codes(found)).toEqual(['error:mme-no-ensemble:.', 'warning:mme-many-models:.']);
  });

  it('refuses two top-level ensembles, naming them, and warns about no unused model (none is loaded)', async () => {
    const message = (count: number, listed: string) =>
      `The archive holds ${count} top-level ensembles (${listed}): SageMaker registers only one of them (the last its ` +
      'directory scan matches), so the others can never be invoked. Package each ensemble with its composing models ' +
      'in its own archive.';
    const two = { ...pipeline(), ...ensemble('other', ['pre']), ...onnx('unused') };
    expect(await check(two)).toEqual([diagnostic('error', 'mme-multiple-ensembles', message(2, 'ens, other'), { file: '.' })]);
    const six: RepoFiles = { ...onnx('net') };
    for (const n of ['e1', 'e2', 'e3', 'e4', 'e5', 'e6']) Object.assign(six, ensemble(n, ['net']));
    expect(codes(await check(six))).toEqual(['error:mme-multiple-ensembles:.', 'warning:mme-many-models:.']);
    expect((await check(six))[0]!.message).toBe(message(6, 'e1, e2, e3, e4, e5 and 1 more'));
  });

  it('refuses a top-level ensemble whose text SageMaker\'s match misses, at its config.pbtxt', async () => {
    const files = { ...python('pre'), ...onnx('net'), ...ensemble('ens', ['pre', 'net'], 'platform : "ensemble"') };
    expect(await check(files)).toEqual([
      diagnostic(
        'error',
        'mme-ensemble-not-detected',
        'SageMaker finds the ensemble by matching the text \'platform:\\s*"ensemble"\' in config.pbtxt, and ' +
          'ens/config.pbtxt does not match it (write exactly platform: "ensemble" — no space before the colon, double ' +
          'quotes). Otherwise SageMaker loads an arbitrary directory of the archive.',
        { file: 'ens/config.pbtxt', model: 'ens' },
      ),
    ]);
  });

  it('refuses a second config that matches, saying whether it is a nested ensemble or only matching text', async () => {
    const ambiguous = (file: string, why: string, top: string, flatten = '') =>
      `${file} also matches SageMaker's ensemble pattern 'platform:\\s*"ensemble"' (${why}); SageMaker registers the ` +
      `last match in readdir order, which may be this one instead of '${top}'. Keep one matching config per archive${flatten}.`;
    const flatten = ': flatten the nested ensemble into the top-level one';
    const commented = { ...python('pre', '\n# was platform: "ensemble"'), ...onnx('net'), ...ensemble('ens', ['pre', 'net']) };
    expect(await check(commented)).toEqual([
      diagnostic(
        'error',
        'mme-ambiguous-ensemble',
        ambiguous('pre/config.pbtxt', 'its text matches the pattern although it is not the ensemble (a comment, say)', 'ens'),
        { file: 'pre/config.pbtxt', model: 'pre' },
      ),
    ]);
    const nested = { ...pipeline(), ...ensemble('outer', ['ens']) };
    expect(await check(nested)).toEqual([
      diagnostic(
        'error',
        'mme-ambiguous-ensemble',
        ambiguous('ens/config.pbtxt', "it is an ensemble nested in 'outer'", 'outer', flatten),
        { file: 'ens/config.pbtxt', model: 'ens' },
      ),
    ]);
    // Two top-level ensembles sharing a nested one: all are named, and the first top-level one is the one meant.
    const shared = { ...pipeline(), ...ensemble('a', ['ens']), ...ensemble('b', ['ens']) };
    expect((await check(shared)).find((d) => d.code === 'mme-ambiguous-ensemble')?.message).toBe(
      ambiguous('ens/config.pbtxt', "it is an ensemble nested in 'a', 'b'", 'a', flatten),
    );
  });

  it('refuses a decoupled loaded model, a decoupled composing model and several, naming the ensemble they make decoupled', async () => {
    const tail = ': SageMaker\'s invoke endpoint refuses it ("HTTP end point doesn\'t support models with decoupled ' +
      'transaction policy"). Use a non-decoupled model on an MME.';
    expect(await check(python('pre', decoupled))).toEqual([
      diagnostic('error', 'mme-decoupled', `'pre' is decoupled (model_transaction_policy { decoupled: true })${tail}`, {
        file: 'pre/config.pbtxt',
        model: 'pre',
      }),
    ]);
    expect(await checkMmeArchive(discover(python('pre', decoupled), 'pre'), 'm.tar.gz')).toEqual([
      diagnostic('error', 'mme-decoupled', `'pre' is decoupled (model_transaction_policy { decoupled: true })${tail}`, {
        file: 'config.pbtxt',
        model: 'pre',
      }),
    ]);
    const one = { ...python('pre', decoupled), ...onnx('net'), ...ensemble('ens', ['pre', 'net']) };
    expect(await check(one)).toEqual([
      diagnostic(
        'error',
        'mme-decoupled',
        `'pre' is decoupled (model_transaction_policy { decoupled: true }), which makes ensemble 'ens' decoupled${tail}`,
        { file: 'ens/config.pbtxt', model: 'ens' },
      ),
    ]);
    const two = { ...python('pre', decoupled), ...onnx('net', decoupled), ...ensemble('ens', ['pre', 'net']) };
    expect((await check(two)).map((d) => d.message)).toEqual([
      `'pre', 'net' are decoupled (model_transaction_policy { decoupled: true }), which makes ensemble 'ens' decoupled${tail}`,
    ]);
    // Not decoupled: the field written false.
    expect(await check(python('pre', '\nmodel_transaction_policy { decoupled: false }'))).toEqual([]);
  });

  it('warns about each model the loaded ensemble never reaches, with a BLS hint for python models', async () => {
    const unused = (name: string, hint = '') =>
      `'${name}' is not a step of ensemble 'ens'; SageMaker downloads it with every cold load but never loads it${hint}. ` +
      'Remove it from the archive or add it to the ensemble.';
    const bls = ' (if a python model calls it through BLS, keep it: SageMaker loads BLS targets only when something loads them)';
    const files = { ...pipeline(), ...onnx('spare'), ...python('helper') };
    expect(await check(files)).toEqual([
      diagnostic('warning', 'mme-unused-model', unused('helper', bls), { file: 'helper', model: 'helper' }),
      diagnostic('warning', 'mme-unused-model', unused('spare'), { file: 'spare', model: 'spare' }),
    ]);
    // A model that SageMaker loads for a comment that matches has no steps: no unused-model warning names it an
    // ensemble; the archive rules say what is wrong.
    const byComment = { ...python('pre', '\n# platform: "ensemble"'), ...onnx('net'), ...unmatchedEnsemble('ens', ['pre', 'net']) };
    expect(codes(await check(byComment))).toEqual([
      'error:mme-ensemble-not-detected:ens/config.pbtxt',
      'error:mme-ambiguous-ensemble:pre/config.pbtxt',
    ]);
    // An ensemble beside the loaded one is reported as a second ensemble, not as an unused model.
    const other = { ...pipeline(), ...ensemble('other', ['net'], 'platform : "ensemble"') };
    expect(codes(await check(other))).toEqual(['error:mme-multiple-ensembles:.', 'error:mme-ensemble-not-detected:other/config.pbtxt']);
  });

  it('warns above five model directories, not at five', async () => {
    expect(MME_MODEL_WARNING_THRESHOLD).toBe(5);
    const five = { ...pipeline(), ...onnx('more'), ...onnx('more2') };
    expect(codes(await check(five)).filter((c) => c.includes('many'))).toEqual([]);
    const six = { ...five, ...onnx('extra') };
    expect(codes(await check(six)).filter((c) => c.includes('many'))).toEqual(['warning:mme-many-models:.']);
    expect((await check(six)).find((d) => d.code === 'mme-many-models')?.message).toMatch(/^The archive holds 6 model directories;/);
  });
});

describe('reachedFrom: what core loads along with the loaded model', () => {
  it('follows steps transitively, through nested ensembles and cycles, skipping names not in the archive', () => {
    const files = {
      ...ensemble('outer', ['ens', 'missing']),
      ...pipeline(),
      ...ensemble('loop1', ['loop2']),
      ...ensemble('loop2', ['loop1', 'net']),
      'bare/config.pbtxt': 'name: "bare" platform: "ensemble"\nensemble_scheduling { step [ { model_version: -1 } ] }',
      ...onnx('alone'),
    };
    const discovery = discover(files);
    const models = new Map(discovery.models.map((m) => [m.name, m]));
    expect([...reachedFrom(models.get('outer')!, models)].sort()).toEqual(['ens', 'net', 'outer', 'pre']);
    expect([...reachedFrom(models.get('loop1')!, models)].sort()).toEqual(['loop1', 'loop2', 'net']);
    expect([...reachedFrom(models.get('bare')!, models)]).toEqual(['bare']);
    expect([...reachedFrom(models.get('alone')!, models)]).toEqual(['alone']);
  });
});

describe('leftOutOfTheArchive', () => {
  it('makes stray-directory errors warnings that say package leaves the directory out, and leaves all else as it was', () => {
    const stray = diagnostic('error', 'stray-directory', 'stray.', { file: '__MACOSX', model: '__MACOSX' });
    const strayWarning = diagnostic('warning', 'stray-directory', 'already a warning.', { file: '.x' });
    const other = diagnostic('error', 'no-version', 'no version.', { file: 'm', model: 'm' });
    expect(leftOutOfTheArchive([stray, strayWarning, other])).toEqual([
      {
        ...stray,
        severity: 'warning',
        message: 'stray. For this archive it does not matter: `package` leaves it out, so SageMaker never sees it (if you ' +
          'make the archive yourself, do delete it).',
      },
      strayWarning,
      other,
    ]);
  });
});

describe('outsideTheLoad: errors of directories SageMaker never loads become warnings', () => {
  const files = { ...pipeline(), ...onnx('spare') };
  const faults = (): Diagnostic[] => [
    diagnostic('error', 'no-version', 'spare fault.', { file: 'spare', model: 'spare' }),
    diagnostic('error', 'duplicate-field', 'net fault.', { file: 'net/config.pbtxt', model: 'net' }),
    diagnostic('error', 'mme-unused-model', 'its own finding.', { file: 'spare', model: 'spare' }),
    diagnostic('warning', 'version-not-numeric', 'a warning.', { file: 'spare', model: 'spare' }),
    diagnostic('error', 'empty-repository', 'no model.', { file: '.' }),
  ];

  it('when one config matches: the errors of models it does not reach, saying what SageMaker loads', () => {
    const [spare, ...rest] = faults();
    expect(outsideTheLoad(discover(files), [spare!, ...rest])).toEqual([
      {
        ...spare,
        severity: 'warning',
        message: "spare fault. Not on this multi-model endpoint, though: SageMaker loads only 'ens' and the models its " +
          "steps name, never 'spare' (which is still downloaded and extracted with every cold load).",
      },
      ...rest,
    ]);
  });

  it('changes nothing when the choice depends on readdir order, for one model directory, or when a config is unseen', () => {
    const given = faults();
    const unchanged = (discovery: Discovery) => {
      const out = outsideTheLoad(discovery, given);
      expect(out).toEqual(given);
      expect(out).not.toBe(given);
    };
    unchanged(discover({ ...files, ...ensemble('other', ['net']) }));
    unchanged(discover({ ...python('pre'), ...onnx('net'), ...onnx('spare'), ...unmatchedEnsemble('ens', ['pre', 'net']) }));
    unchanged(discover({ ...python('pre'), ...onnx('spare') }));
    const hidden = discover({ ...files, '.hidden/config.pbtxt': 'platform: "ensemble"' });
    expect(hidden.diagnostics.map((d) => d.code)).toEqual(['hidden-model-directory']);
    unchanged(hidden);
    const notUtf8 = discover(files);
    notUtf8.diagnostics.push(diagnostic('error', 'name-not-utf8', 'x', { file: '\uFFFD' }));
    unchanged(notUtf8);
    const single = discover(python('pre', '\n# platform: "ensemble"'), 'pre');
    expect(single.layout).toBe('model');
    const ownFault = diagnostic('error', 'no-version', 'x', { file: '.', model: 'other' });
    expect(outsideTheLoad(single, [ownFault])).toEqual([ownFault]);
    // The same discovery with an unrelated note is still judged.
    const noted = discover(files);
    noted.diagnostics.push(diagnostic('warning', 'stray-directory', 'x', { file: '.x' }));
    expect(outsideTheLoad(noted, given)[0]!.severity).toBe('warning');
  });
});

describe('EXECUTION_ENV_PATH of a python model in the archive', () => {
  const env = (value: string) => `\nparameters { key: "EXECUTION_ENV_PATH" value { string_value: "${value}" } }`;
  const inModel = (file: string) => `$$TRITON_MODEL_DIRECTORY/${file}`;
  /** The diagnostic at the parameter's key (line 2, column 14 of pre/config.pbtxt), as the rules report it. */
  const at = (severity: 'error' | 'warning', code: string, message: string) => ({
    severity,
    code,
    message,
    file: 'pre/config.pbtxt',
    line: 2,
    column: 14,
    model: 'pre',
    excerpt: expect.stringMatching(/^parameters \{ key: "EXECUTION_ENV_PATH".*\n {13}\^$/),
  });

  it('checks nothing without the parameter', async () => {
    expect(await check(python('pre', '\nparameters { key: "OTHER" value { string_value: "/x" } }'))).toEqual([]);
  });

  it('warns about a path outside $$TRITON_MODEL_DIRECTORY, absolute or relative to the server', async () => {
    const message = (value: string, how: string) =>
      `EXECUTION_ENV_PATH '${value}' does not start with $$TRITON_MODEL_DIRECTORY. Triton accepts ${how}, but on a ` +
      'SageMaker endpoint the file must already be on the instance: the multi-model endpoint downloads only this ' +
      'archive, so the load fails with "Failed to get the canonical path for ..." unless the serving image provides ' +
      'it. To ship the environment with the model, put the conda-pack archive in the model directory and write ' +
      '"$$TRITON_MODEL_DIRECTORY/<env>.tar.gz".';
    expect(await check(python('pre', env('/opt/conda/env.tar.gz')))).toEqual([
      at('warning', 'mme-execution-env-path', message('/opt/conda/env.tar.gz', 'an absolute path')),
    ]);
    expect(await check(python('pre', env('envs/env.tar.gz')))).toEqual([
      at('warning', 'mme-execution-env-path', message('envs/env.tar.gz', "it (resolved from the server's working directory)")),
    ]);
  });

  it('leaves a missing path, and one that leads out of the model directory, to the model rules', async () => {
    expect(await check(python('pre', env(inModel('env.tar.gz'))))).toEqual([]);
    const outside = { ...python('pre', env(inModel('../net/env.tar.gz'))), ...onnx('net'), 'net/env.tar.gz': '' };
    expect(codes(await check(outside))).toEqual(['error:mme-no-ensemble:.']);
  });

  it('requires bin/activate in an unpacked environment directory', async () => {
    const noActivate = "Path pre/env/bin/activate does not exist. The Python environment should contain an 'activate' script";
    expect(await check({ ...python('pre', env(inModel('env'))), 'pre/env/lib/x.py': 'x', 'pre/env/bin/python': 'x' })).toEqual([
      at('error', 'mme-execution-env-activate', `${noActivate}. Build the environment with conda-pack (it writes bin/activate).`),
    ]);
    expect(await check({ ...python('pre', env(inModel('env'))), 'pre/env/bin/activate': '#' })).toEqual([]);
  });

  it('refuses a file that is not .tar.gz or .tgz', async () => {
    const message = (shown: string) =>
      `EXECUTION_ENV_PATH ${shown} is a file but not a .tar.gz: the python backend expects a conda-pack archive ` +
      '(conda pack -o env.tar.gz) or an unpacked environment directory.';
    for (const file of ['env.zip', 'env.tar.gz.bak', 'env.tar', 'env.gz', 'env-tgz', 'env.tar_gz']) {
      expect(await check({ ...python('pre', env(inModel(file))), [`pre/${file}`]: 'x' })).toEqual([
        at('error', 'mme-execution-env-format', message(`pre/${file}`)),
      ]);
    }
  });

  it('shows a path below the model directory with / between its parts', async () => {
    expect(await check({ ...python('pre', env(inModel('envs/py/env.zip'))), 'pre/envs/py/env.zip': 'x' })).toEqual([
      at(
        'error',
        'mme-execution-env-format',
        'EXECUTION_ENV_PATH pre/envs/py/env.zip is a file but not a .tar.gz: the python backend expects a conda-pack ' +
          'archive (conda pack -o env.tar.gz) or an unpacked environment directory.',
      ),
    ]);
    expect((await check({ ...python('pre', env(inModel('envs/py'))), 'pre/envs/py/lib/': null }))[0]!.message).toMatch(
      /^Path pre\/envs\/py\/bin\/activate does not exist\./,
    );
  });

  it('takes an empty .tar.gz or .tgz for a stand-in: a warning, its contents unread', async () => {
    for (const file of ['env.tar.gz', 'env.tgz']) {
      expect(await check({ ...python('pre', env(inModel(file))), [`pre/${file}`]: '' })).toEqual([
        at(
          'warning',
          'mme-execution-env-empty',
          `EXECUTION_ENV_PATH pre/${file} is empty (a stand-in?), so its contents are not checked here; the python ` +
            'backend cannot extract an empty file. Put the conda-pack archive there before deploying.',
        ),
      ]);
    }
  });

  it('reads the archive for bin/activate, with or without ./ in front, and says so when it holds none', async () => {
    const withEnv = (archive: Buffer) => ({ ...python('pre', env(inModel('env.tar.gz'))), 'pre/env.tar.gz': archive });
    expect(await check(withEnv(tarGzOf({ 'bin/activate': '#', 'lib/': null })))).toEqual([]);
    const flat = tarGzOf({ 'bin/activate': '#' }, '');
    expect(await check({ ...python('pre', env(inModel('env.tgz'))), 'pre/env.tgz': flat })).toEqual([]);
    expect(await check(withEnv(tarGzOf({ 'bin/activate.sh': '#', 'lib/': null })))).toEqual([
      at(
        'error',
        'mme-execution-env-activate',
        "Path pre/env.tar.gz/bin/activate does not exist. The Python environment should contain an 'activate' script: " +
          'pre/env.tar.gz holds no bin/activate, so it is not a conda-pack archive. Build it with conda-pack.',
      ),
    ]);
  });

  it('refuses an archive that is no readable tar.gz, with the reader\'s reason', async () => {
    const [found] = await check({ ...python('pre', env(inModel('env.tar.gz'))), 'pre/env.tar.gz': 'not gzip at all' });
    expect(found).toEqual(at('error', 'mme-execution-env-format', expect.any(String)));
    expect(found!.message).toMatch(
      /^EXECUTION_ENV_PATH pre\/env\.tar\.gz is not a readable tar\.gz \(not a valid tar archive: .+\)\. Rebuild it with conda-pack\.$/,
    );
  });

  it('takes what the archive reader already learnt of the archive instead of reading it again', async () => {
    const files = { ...python('pre', env(inModel('env.tar.gz'))), 'pre/env.tar.gz': 'not gzip, never read' };
    const root = makeRepo(files);
    const path = join(root, 'pre', 'env.tar.gz');
    const run = (known: MmeArchiveOptions['envArchives']) => checkMmeArchive(discoverModels(root), 'm.tar.gz', { envArchives: known });
    expect(await run(new Map([[path, { hasActivate: true }]]))).toEqual([]);
    expect(codes(await run(new Map([[path, { hasActivate: false }]])))).toEqual(['error:mme-execution-env-activate:pre/config.pbtxt']);
    expect(await run(new Map([[path, { error: 'unexpected end of file' }]]))).toEqual([
      at(
        'error',
        'mme-execution-env-format',
        'EXECUTION_ENV_PATH pre/env.tar.gz is not a readable tar.gz (unexpected end of file). Rebuild it with conda-pack.',
      ),
    ]);
    // Another path's entry is no answer for this one: the file itself is read.
    expect(codes(await run(new Map([[`${path}.other`, { hasActivate: true }]])))).toEqual([
      'error:mme-execution-env-format:pre/config.pbtxt',
    ]);
  });

  it('warns about an archive above 500 MiB, which every cold load unpacks', async () => {
    expect(LARGE_ENV_BYTES).toBe(500 * 1024 * 1024);
    const root = makeRepo({ ...python('pre', env(inModel('env.tar.gz'))), 'pre/env.tar.gz': 'x' });
    const path = join(root, 'pre', 'env.tar.gz');
    const known = { envArchives: new Map([[path, { hasActivate: true }]]) };
    // A sparse file: its size is what counts, and nothing is read.
    truncateSync(path, LARGE_ENV_BYTES);
    expect(await checkMmeArchive(discoverModels(root), 'm.tar.gz', known)).toEqual([]);
    truncateSync(path, LARGE_ENV_BYTES + 1);
    const large = (mb: number) =>
      `pre/env.tar.gz is ${mb} MB: the python backend unpacks it on every cold load of this model, which delays first ` +
      'requests. Trim the environment, share it across models, or install the packages into the serving image ' +
      '(triton-image/requirements.txt).';
    expect(await checkMmeArchive(discoverModels(root), 'm.tar.gz', known)).toEqual([at('warning', 'mme-large-execution-env', large(500))]);
    truncateSync(path, 1536 * 1024 * 1024 - 1);
    const noActivate = { envArchives: new Map([[path, { hasActivate: false }]]) };
    expect(codes(await checkMmeArchive(discoverModels(root), 'm.tar.gz', noActivate))).toEqual([
      'error:mme-execution-env-activate:pre/config.pbtxt',
      'warning:mme-large-execution-env:pre/config.pbtxt',
    ]);
    expect((await checkMmeArchive(discoverModels(root), 'm.tar.gz', noActivate))[1]!.message).toBe(large(1536));
  });

  it('checks every model of the archive, not only the loaded one', async () => {
    const outside = env('/opt/env.tar.gz');
    const files = { ...python('pre', outside), ...python('post', outside), ...ensemble('ens', ['pre', 'post']) };
    expect(codes(await check(files))).toEqual([
      'warning:mme-execution-env-path:post/config.pbtxt',
      'warning:mme-execution-env-path:pre/config.pbtxt',
    ]);
  });
});

describe('holdsActivate', () => {
  // Built in memory (the reader's own tests' writer), so that the near misses below cost no tar process each.
  const stream = (...members: Buffer[]) => Readable.from([gzipOf(tarOf(...members))]);

  it('finds bin/activate as a file or a directory entry, with or without ./ in front, in a stream', async () => {
    expect(await holdsActivate(stream(directoryMember('./lib'), fileMember('./bin/activate', '#')))).toBe(true);
    expect(await holdsActivate(stream(fileMember('bin/activate', '#')))).toBe(true);
    expect(await holdsActivate(stream(directoryMember('./bin/activate')))).toBe(true);
    expect(await holdsActivate(stream(directoryMember('bin/activate')))).toBe(true);
  });

  it('is false for near misses', async () => {
    for (const path of ['bin/activate.sh', 'xbin/activate', 'lib/bin/activate', 'bin/activate/inner', 'activate', '.bin/activate']) {
      expect(await holdsActivate(stream(fileMember(path, '#')))).toBe(false);
      expect(await holdsActivate(stream(fileMember(`./${path}`, '#')))).toBe(false);
    }
    expect(await holdsActivate(stream(directoryMember('./bin')))).toBe(false);
  });

  it('rejects what is no tar.gz', async () => {
    await expect(holdsActivate(Readable.from([Buffer.from('not gzip')]))).rejects.toThrow(/not a valid tar archive/);
  });
});
