// Synthesizes an app with cdk-nag's AwsSolutions pack and returns what it reported (shared by the nag tests).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { AwsSolutionsChecks } from 'cdk-nag';

export interface NagFinding {
  rule: string;
  paths: string[];
  reason?: string;
}

export interface NagOutcome {
  /** The synthesis error (cdk-nag errors make synthesis throw), or undefined. */
  error?: string;
  findings: NagFinding[];
  /** The acknowledgments recorded in the app (`Validations.acknowledge`), each at the construct that made it. */
  acknowledged: NagFinding[];
  /** The synthesized templates by stack name (read before the temporary directory goes). */
  templates: Record<string, Record<string, unknown>>;
}

interface Report {
  pluginReports: Array<{
    pluginName: string;
    violations: Array<{ ruleName: string; violatingConstructs: Array<{ constructPath: string }> }>;
    suppressedViolations?: Array<{
      acknowledgedId: string;
      reason: string;
      violatingConstructs: Array<{ constructPath: string }>;
    }>;
  }>;
}

/** Builds an app in a temporary directory with `build`, runs AwsSolutions over it, and reads the report. */
export function synthWithNag(build: (app: App) => void, context: Record<string, unknown> = {}): NagOutcome {
  const outdir = mkdtempSync(join(tmpdir(), 'mme-nag-'));
  try {
    const app = new App({ outdir, context });
    build(app);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    let error: string | undefined;
    const templates: Record<string, Record<string, unknown>> = {};
    try {
      for (const artifact of app.synth().stacks) templates[artifact.stackName] = artifact.template as Record<string, unknown>;
    } catch (err) {
      error = (err as Error).message;
    }
    let report: Report = { pluginReports: [] };
    try {
      report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as Report;
    } catch {
      // no report: no plugin had anything to say
    }
    const nag = report.pluginReports.filter((r) => r.pluginName === 'AwsSolutions');
    return {
      error,
      findings: nag.flatMap((r) =>
        r.violations.map((v) => ({ rule: v.ruleName, paths: v.violatingConstructs.map((c) => c.constructPath) })),
      ),
      acknowledged: acknowledgmentsIn(app),
      templates,
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}


/** Every acknowledgment in the tree: bare rule id (the `Annotation::` qualifier aws-cdk-lib adds is dropped), path, reason. */
function acknowledgmentsIn(root: IConstruct): NagFinding[] {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([id, reason]) => ({ rule: id.replace(/^annotation::/i, ''), paths: [c.node.path], reason })),
  );
}
