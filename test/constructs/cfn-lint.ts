// cfn-lint (1.51, on the machine image) over every CloudFormation template the tests synthesize, in one cfn-lint run:
// tests record their templates (recordTemplate: in-process synths through a hook, child-process apps by hand) into
// the run's directory, and the run's global teardown lints them all. Starting cfn-lint costs seconds, so one run for
// the whole suite (split over the cores) instead of one per test file.

import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTools, missingMessage } from '../tools';

/** The environment variable naming the run's directory of templates to lint (set by the global setup). */
export const LINT_DIR_VARIABLE = 'MME_CFN_LINT_DIR';

/**
 * Queues `template` for the run's cfn-lint; `name` says where it came from (test name, stack). Identical templates
 * are linted once. Outside a Jest run with the global setup, lints at once and throws on errors.
 */
export function recordTemplate(name: string, template: unknown): void {
  const json = JSON.stringify(template);
  const dir = process.env[LINT_DIR_VARIABLE];
  if (!dir) {
    const errors = cfnLint({ [name]: template });
    if (errors.length > 0) throw new Error(`cfn-lint errors:\n${formatCfnLintErrors(errors)}`);
    return;
  }
  mkdirSync(dir, { recursive: true });
  const hash = createHash('sha256').update(json).digest('hex').slice(0, 16);
  writeFileSync(join(dir, `${hash}.json`), JSON.stringify({ name, template }));
}

/**
 * Lints every template recorded in `dir`; returns the errors. The templates are shared out, by size, over `processes`
 * cfn-lint runs at once: its start-up (about 4 s of CPU) is paid once per run, its work per template (about 0.2 s) is
 * split, and the teardown that waits for it has both cores to itself.
 */
export async function lintRecordedTemplates(
  dir: string,
  command = cfnLintCommand(),
  processes = Math.min(2, availableParallelism()),
): Promise<CfnLintError[]> {
  const recorded = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  const templates: Record<string, unknown> = {};
  const bytes = new Map<string, number>();
  for (const file of recorded) {
    const text = readFileSync(join(dir, file), 'utf8');
    const { name, template } = JSON.parse(text) as { name: string; template: unknown };
    const key = `${name} [${file.slice(0, 8)}]`;
    templates[key] = template;
    bytes.set(key, text.length);
  }
  // Largest first, each to the run with the fewest bytes so far.
  const groups = Array.from({ length: Math.max(1, processes) }, () => ({ templates: {} as Record<string, unknown>, bytes: 0 }));
  for (const key of [...bytes.keys()].sort((a, b) => bytes.get(b)! - bytes.get(a)!)) {
    const group = groups.reduce((least, g) => (g.bytes < least.bytes ? g : least));
    group.templates[key] = templates[key];
    group.bytes += bytes.get(key)!;
  }
  const runs = await Promise.all(groups.map((g) => cfnLintAsync(g.templates, command)));
  return runs.flat();
}

/**
 * Checks left out, each for a reason that is not a template bug:
 * - E3006 "resource type does not exist in region": cfn-lint 1.51's region table predates resource types that
 *   exist today (the only filter the issue allows without further explanation).
 */
export const IGNORED_CHECKS = ['E3006'];

/**
 * Single findings where cfn-lint 1.51's bundled resource schemas lag the CloudFormation registry, matched exactly
 * (rule, resource type, property path), so the same rule still catches everything else:
 * - E3002 on AWS::CloudWatch::Dashboard Tags: CloudFormation takes Tags there (aws-cdk-lib 2.269's CfnDashboard,
 *   generated from the registry schema, is ITaggableV2 and documents cfn-cloudwatch-dashboard-tags); cfn-lint's schema
 *   predates them. The endpoint's `tags` reach its dashboard on purpose.
 */
const SCHEMA_LAGS = [{ rule: 'E3002', type: 'AWS::CloudWatch::Dashboard', path: /^Resources\/[^/]+\/Properties\/Tags$/ }];

export interface CfnLintError {
  readonly template: string;
  readonly rule: string;
  readonly path: string;
  readonly message: string;
}

/** The cfn-lint on PATH; a missing one is an error naming how to install it (test/tools.ts decides skip or fail). */
export function cfnLintCommand(): string {
  const found = findTools({ tools: ['cfn-lint'] });
  if (!found.ok) throw new Error(`cfn-lint ${missingMessage(found)}`);
  return found.paths['cfn-lint']!;
}

/** Lints `templates` (name → template) in one cfn-lint run; returns its errors (warnings and infos are not kept). */
export function cfnLint(templates: Record<string, unknown>, command = cfnLintCommand()): CfnLintError[] {
  const names = Object.keys(templates);
  if (names.length === 0) return [];
  const written = writeTemplates(templates);
  try {
    const run = spawnSync(command, lintArguments(written.files), { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return lintErrors(templates, written.files, { ...run, error: run.error?.message });
  } finally {
    rmSync(written.dir, { recursive: true, force: true });
  }
}

/** cfnLint in a child that does not block the event loop (several run at once: lintRecordedTemplates). */
async function cfnLintAsync(templates: Record<string, unknown>, command: string): Promise<CfnLintError[]> {
  if (Object.keys(templates).length === 0) return [];
  const written = writeTemplates(templates);
  try {
    const run = await new Promise<LintRun>((resolve) =>
      execFile(command, lintArguments(written.files), { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
        // A non-zero exit is an error here, with the status as its code (a string code: cfn-lint could not start).
        resolve({ status: !error ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr, error: error?.message }),
      ),
    );
    return lintErrors(templates, written.files, run);
  } finally {
    rmSync(written.dir, { recursive: true, force: true });
  }
}

interface LintRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly error?: string | undefined;
}

/** Each template in a file of a new directory, in the order of `templates`' names. */
function writeTemplates(templates: Record<string, unknown>): { dir: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'mme-cfn-lint-'));
  const files = Object.keys(templates).map((name, i) => {
    // File names stay short (a test's name can be long); cfn-lint's findings are mapped back by file.
    const file = join(dir, `${String(i).padStart(3, '0')}-${name.replace(/[^A-Za-z0-9._-]/g, '_').slice(-80)}.template.json`);
    writeFileSync(file, JSON.stringify(templates[name], null, 1));
    return file;
  });
  return { dir, files };
}

function lintArguments(files: readonly string[]): string[] {
  return ['--format', 'json', '--ignore-checks', ...IGNORED_CHECKS, '--', ...files];
}

/** The errors of a cfn-lint run over `files` (written from `templates`, in order); throws when cfn-lint itself failed. */
function lintErrors(templates: Record<string, unknown>, files: readonly string[], run: LintRun): CfnLintError[] {
  const names = Object.keys(templates);
  // Exit codes are a bit mask (2 errors, 4 warnings, 8 infos); anything else, or no JSON, means cfn-lint failed.
  let findings: Array<{ Filename: string; Level: string; Rule: { Id: string }; Location: { Path: unknown[] }; Message: string }>;
  try {
    findings = JSON.parse(run.stdout || '[]');
  } catch {
    throw new Error(`cfn-lint failed (exit ${run.status}): ${run.stderr || run.error}`);
  }
  if (run.status === null || (run.status & 1) !== 0) throw new Error(`cfn-lint failed (exit ${run.status}): ${run.stderr}`);
  const typeAt = (file: string, path: unknown[]) => {
    const template = templates[names[files.indexOf(file)]!] as { Resources?: Record<string, { Type?: string }> };
    return path[0] === 'Resources' ? template.Resources?.[String(path[1])]?.Type : undefined;
  };
  return findings
    .filter((f) => f.Level === 'Error')
    .filter(
      (f) =>
        !SCHEMA_LAGS.some(
          (lag) => lag.rule === f.Rule.Id && lag.path.test(f.Location.Path.join('/')) && lag.type === typeAt(f.Filename, f.Location.Path),
        ),
    )
    .map((f) => ({
      template: names[files.indexOf(f.Filename)] ?? f.Filename,
      rule: f.Rule.Id,
      path: f.Location.Path.join('/'),
      message: f.Message,
    }));
}

/** One line per error, for a failing assertion. */
export function formatCfnLintErrors(errors: CfnLintError[]): string {
  return errors.map((e) => `${e.template}: ${e.rule} at ${e.path}: ${e.message}`).join('\n');
}
