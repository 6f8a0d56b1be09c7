// The command-line grammar: every command, its options and its help. Actions load their module lazily so that
// `--help` and light commands never pay for the AWS SDK, aws-cdk-lib or zod.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { MmeError } from '../errors';
import { exitCodeOf } from './exit-codes';
import { CliError, CliIo, ExitCode } from './io';
import { errorJson, wantsJson } from './json';
import type { Cancellation, CancellationOptions } from './signals';
import { escapeControl, escapeJsonText, escapeLine } from './terminal-text';
import { addAwsOptions, addLocationOptions } from './aws-options';
import { addInvokeInputOptions, repeatable } from './invoke-flags';
import { addHelpSections, commandPath, described, helpConfiguration } from './help-style';
import { COMMAND_HELP } from './help-examples';
import { addTargetOptions, addVerdictOptions } from './target-options';

export async function main(argv: readonly string[], rawIo: CliIo): Promise<number> {
  // Every human output goes through the one escaping function: text from files, names and servers never reaches
  // the terminal with raw control characters (JSON escapes them itself; the few left are \u escapes, still JSON).
  // JSON on stdout (`--json`, and `config`'s only format) is escaped the JSON way, so it stays valid JSON.
  const { status, prompt } = rawIo;
  const json = wantsJson(argv);
  const jsonStdout = json || argv[0] === 'config';
  // --quiet is known once commander has read the program's options, before any command's action runs.
  let program: Command | undefined;
  const quiet = () => Boolean(program?.opts<{ quiet?: boolean }>().quiet);
  const escapedStatus = status ? (s: string) => status(escapeControl(s)) : undefined;
  const io: CliIo = {
    ...rawIo,
    stdout: (s) => rawIo.stdout(jsonStdout ? escapeJsonText(s) : escapeControl(s)),
    stderr: (s) => rawIo.stderr(escapeControl(s)),
    get status() {
      return quiet() ? undefined : escapedStatus;
    },
    get quiet() {
      return quiet();
    },
    ...(prompt ? { prompt: (question: string) => prompt(escapeControl(question)) } : {}),
  };
  let exitCode: number = ExitCode.Ok;
  const setExit = (code: number) => {
    exitCode = code;
  };
  program = buildProgram(io, setExit);
  try {
    await program.parseAsync(argv as string[], { from: 'user' });
  } catch (err) {
    return reportFailure(err, io, json);
  }
  return exitCode;
}

/**
 * The one place a failed command is reported: `mme-deploy: <message>` on stderr, and with --json also one
 * `{"error": {"code", "message"}}` object on stdout; the exit code comes from the error's code.
 */
export function reportFailure(err: unknown, io: CliIo, json: boolean): number {
  const fail = (code: string, message: string, exitCode: number, human = true) => {
    // One line whatever the message quotes (an entry name, an S3 key, a server's text): no forged second line.
    if (human) io.stderr(`mme-deploy: ${escapeLine(message)}\n`);
    if (json) io.stdout(errorJson(code, message));
    return exitCode;
  };
  if (err instanceof CommanderError) {
    // --help and --version; `help` with no command or a bare command group (`mme-deploy`, `mme-deploy local`) print
    // the help on stderr with a non-zero exit code.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return ExitCode.Ok;
    if (err.code === 'commander.help' && err.exitCode === 0) return ExitCode.Ok;
    const message = err.code === 'commander.help' ? 'a command is required (see the list above)' : err.message.replace(/^error: /, '');
    // Commander has already printed its message through configureOutput.
    return fail('USAGE', message, ExitCode.Usage, err.code === 'commander.help');
  }
  if (err instanceof MmeError) return fail(err.code, err.message, exitCodeOf(err.code));
  if (err instanceof CliError) return fail(err.code, err.message, err.exitCode);
  const message = err instanceof Error ? err.message : String(err);
  fail('INTERNAL', `internal error: ${message}`, ExitCode.Failure);
  if (io.env.MME_DEPLOY_DEBUG && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`);
  else io.stderr('Run again with MME_DEPLOY_DEBUG=1 for details, and please report it.\n');
  return ExitCode.Failure;
}

type SetExit = (code: number) => void;

/** DEFAULT_TRITON_VERSION (lib/catalog/triton-images.ts), spelled here so that --help loads no catalog. */
const DEFAULT_TRITON = '24.09';

/** What `validate` and `package` do with the target endpoint. */
const TARGET_USE = {
  instanceType: 'TensorRT plans must be built for (its GPU\'s compute capability)',
  tritonVersion: '(its TensorRT for plans, its Python for model.py)',
  tritonDefault: DEFAULT_TRITON,
};

/** The whole command tree; exported so tests can read the grammar (docs name only commands and options it has). */
export function buildProgram(io: CliIo, setExit: SetExit): Command {
  const program: Command = new Command('mme-deploy')
    .description(
      'Validate, package, deploy and operate NVIDIA Triton ensembles on Amazon SageMaker GPU multi-model endpoints.',
    )
    .version(packageVersion(), '-v, --version', 'print the version')
    .option('-q, --quiet', 'print no progress and no notes on stderr; errors and warnings still print')
    .configureHelp(helpConfiguration)
    .configureOutput(outputFor(io, (): Command => program))
    .exitOverride();

  const validate = program
    .command('validate')
    .description('Check a Triton model repository (or one model directory) offline with Triton\'s own rules.')
    .argument('<path>', 'a model repository (its subdirectories are models), one model directory, or a .tar.gz TargetModel ' +
      'archive (read to its end, judged as SageMaker extracts it)')
    .option('--json', 'print one JSON report on stdout')
    .option('--mme', 'also apply the SageMaker multi-model endpoint archive rules')
    .option(
      '--run-python',
      described("run python models' auto_complete_config as Triton does at load, and check the config it completes; this " +
        "executes the models' code; the python3 interpreter is", { env: 'MME_DEPLOY_PYTHON', default: 'python3 on PATH' }),
    )
    .option(
      '--no-python-syntax',
      "skip compiling python models' model.py for the Python of the target image (the check is on unless this is " +
        "given: python3's parser, the code is never run; without a python3 it is skipped with a note)",
    );
  addTargetOptions(validate, TARGET_USE);
  addVerdictOptions(validate)
    .action(async (path: string, options: import('./validate').ValidateCommandOptions) => {
      const { runValidate } = await import('./validate');
      setExit(await runValidate(path, options, io));
    });

  program
    .command('config')
    .description('Print a model\'s config.pbtxt as parsed (no auto-complete).')
    .argument('<model-dir>', 'a model directory holding config.pbtxt, or the config file itself')
    .option('--json', 'print JSON; always on (JSON is the only format), and errors become one JSON object too')
    .action(async (path: string, options: { json?: boolean }) => {
      const { runConfig } = await import('./config');
      setExit(await runConfig(path, io, options));
    });

  const pack = program
    .command('package')
    .description('Validate with the SageMaker MME rules and write the reproducible tar.gz an MME loads.')
    .argument('<path>', 'a model repository (an ensemble and its composing models) or one model directory')
    .option(
      '-o, --output <file-or-dir>',
      described('archive to write, or a directory to write <TargetModel> into', {
        default: '<TargetModel> in the current directory, or beside the repository when run inside it',
      }),
    )
    .option('--name <target-model>', described('TargetModel name', { default: 'the output file name, or <dirname>.tar.gz' }))
    .option('--level <0-9>', described('gzip level; weights that do not compress are stored whatever the level', { default: '6' }), '6')
    .option('--force', 'replace an existing archive')
    .option('--json', 'print one JSON object on stdout')
    .option('--no-python-syntax', "skip compiling python models' model.py for the Python of the target image (see validate)");
  addTargetOptions(pack, TARGET_USE);
  addVerdictOptions(pack)
    .action(async (path: string, options: import('./package').PackageOptions) => {
      const { runPackage } = await import('./package');
      setExit(await cancellable(io, {}, ({ signal, onQuit }) => runPackage(path, options, io, signal, onQuit)));
    });

  program
    .command('graph')
    .description('Draw the ensemble pipeline: steps as nodes, tensors (data type and dims) on the edges.')
    .argument('<path>', 'a model repository holding the ensemble and its composing models')
    .addOption(new Option('--format <format>', described('output format: mermaid or dot', { default: 'mermaid' }))
      .choices(['mermaid', 'dot']).default('mermaid'))
    .option('--ensemble <name>', described('draw this ensemble', { default: 'every top-level ensemble' }))
    .action(async (path: string, options: { format?: string; ensemble?: string }) => {
      const { runGraph } = await import('./graph');
      setExit(await runGraph(path, options, io));
    });

  program
    .command('plan')
    .description(
      'Estimate GPU memory, cost and cache behaviour of a multi-model endpoint for these models, before deploying it.',
    )
    .argument('<paths...>', 'TargetModel archives (.tar.gz) or model repository directories, one per model')
    .option('--instance-type <type>', described('SageMaker instance type', { default: 'ml.g4dn.xlarge' }))
    .option('--instances <n>', described('MME instances to cost; the simulation covers 1..n', { default: '1' }))
    .option('--region <region>', described('AWS region for the price', { env: ['AWS_REGION', 'AWS_DEFAULT_REGION'], default: 'us-east-1' }))
    .option('--price <usd>', described(
      'on-demand USD per instance-hour; required where the catalog has none (it covers us-east-1 and part of us-east-2)',
      { default: 'the catalog price' },
    ))
    .option('--traffic <spec>', described('uniform, zipf:S, or a CSV file (model,weight or timestamp,model)', { default: 'uniform' }))
    .option('--rps <n>', described('requests per second over all models', { default: '10' }))
    .option('--requests <n>', described('requests to simulate', { default: '200000' }))
    .option('--seed <n>', described('seed of the simulated traffic', { default: '1' }))
    .option('--memory <name=GiB>', described('GPU memory of one model, replacing the estimate (repeatable)', {
      default: 'estimated from the weight files',
    }), repeatable)
    .option('--gpu-reserve <MiB>', described('GPU memory kept back from the usable figure for the Triton server', { default: '1024' }))
    .option('--disk-gb <GB>', described('model cache disk per instance', { default: 'the NVMe instance store' }))
    .option('--cold-start <params>', described('cold-start rates, any of download=MB/s,extract=MB/s,load=MB/s,per-model=s', {
      default: 'download=100,extract=150,load=500,per-model=1',
    }))
    .option('--json', 'print one JSON report on stdout')
    .option('--csv <file>', 'write the per-instance-count curve as CSV')
    .option('--force', 'let --csv replace an existing file')
    .action(async (paths: string[], options: import('./plan').PlanCommandOptions) => {
      const { runPlan } = await import('./plan');
      setExit(await cancellable(io, {}, ({ signal }) => runPlan(paths, options, io, signal)));
    });

  const local = program
    .command('local')
    .description(
      'Drive a Triton container on this machine the way SageMaker drives an MME container: load, invoke, unload, list.',
    );
  const localUrlHelp = described('the container\'s SageMaker port', { env: 'MME_DEPLOY_LOCAL_URL', default: 'http://127.0.0.1:8080' });
  const localDirFacts = { env: 'MME_DEPLOY_LOCAL_MODELS_DIR', default: './mme-local-models' };
  const localDirHelp = described('host directory mounted at /opt/ml/models', localDirFacts);
  const localLoad = local
    .command('load')
    .description('Extract a TargetModel archive into <models-dir>/<hash>/model/ and send POST /models, as SageMaker does.')
    .argument('<archive>', 'the .tar.gz made by `mme-deploy package`')
    .option('--models-dir <dir>', localDirHelp)
    .option('--url <url>', localUrlHelp)
    .option('--name <target-model>', described('the TargetModel name', { default: 'the archive file name' }))
    .option('--container-root <path>', described('where the container sees --models-dir', { default: '/opt/ml/models' }))
    .option('--inference-ami-version <version>', described('the endpoint\'s InferenceAmiVersion, i.e. its GPU driver', {
      default: 'SageMaker\'s, 470',
    }))
    .option('--container <name>', described('the local container, for its /dev/shm', { default: 'the one publishing --url\'s port' }))
    .option(
      '--cpu',
      'stage for a container without a GPU (docker run without --gpus): KIND_GPU instance groups become KIND_CPU in the ' +
        'staged copy, not the archive (a warning per model); TensorRT plans and DALI GPU pipelines are refused',
    )
    .option('--json', 'print one JSON object on stdout');
  addTargetOptions(localLoad, {
    instanceType: 'to compare this GPU with',
    tritonVersion: 'to compare this container with',
    tritonDefault: `the local container's, else ${DEFAULT_TRITON}`,
  })
    .action(async (archive: string, options: import('./local').LocalLoadOptions) => {
      const { runLocalLoad } = await import('./local');
      setExit(await cancellable(io, {}, ({ signal }) => runLocalLoad(archive, options, io, signal)));
    });
  const localInvoke = local
    .command('invoke')
    .description('Send POST /models/<hash>/invoke with the body `mme-deploy invoke` builds, and print the outputs.')
    .argument('<target-model>', 'the TargetModel name given at load');
  addInvokeInputOptions(localInvoke)
    .option('--json', 'print the decoded response as JSON')
    .option('--models-dir <dir>', described('host directory mounted at /opt/ml/models; its copy of the archive gives the model ' +
      'config', localDirFacts))
    .option('--url <url>', localUrlHelp)
    .action(async (target: string, options: import('./local').LocalInvokeOptions) => {
      const { runLocalInvoke } = await import('./local');
      setExit(await cancellable(io, {}, ({ signal }) => runLocalInvoke(target, options, io, signal)));
    });
  local
    .command('unload')
    .description('Send DELETE /models/<hash>, as SageMaker does when it evicts a model.')
    .argument('<target-model>', 'the TargetModel name given at load')
    .option('--url <url>', localUrlHelp)
    .option('--json', 'print one JSON object on stdout')
    .action(async (target: string, options: import('./local').LocalConnectionOptions) => {
      const { runLocalUnload } = await import('./local');
      setExit(await runLocalUnload(target, options, io));
    });
  local
    .command('list')
    .description('List the models the container has loaded and the archives extracted in --models-dir.')
    .option('--models-dir <dir>', localDirHelp)
    .option('--url <url>', localUrlHelp)
    .option('--json', 'print one JSON object on stdout')
    .action(async (options: import('./local').LocalConnectionOptions) => {
      const { runLocalList } = await import('./local');
      setExit(await runLocalList(options, io));
    });

  // Live multi-model endpoint: push, list, remove, invoke, status (the AWS SDK loads inside each action).
  addLocationOptions(
    program
      .command('push')
      .description('Upload a TargetModel under the endpoint\'s S3 prefix: an archive, or a repository directory ' +
        'validated and packed on the fly.')
      .argument('<archive-or-dir>', 'a .tar.gz TargetModel archive, or a model repository directory'),
  )
    .option('--name <target-model>', described('the TargetModel name', { default: 'the archive\'s file name, or <directory>.tar.gz' }))
    .option('--force', 'replace an existing TargetModel (instances keep serving their cached copy until it is evicted)')
    .option('--level <0-9>', described('gzip level when packing a directory', { default: '6' }))
    .option(
      '--versioned',
      'name it <name>-<first 12 hex of the archive\'s SHA-256>.tar.gz, as the CDK ModelArchive does: a changed model never ' +
        'replaces one instances have cached (a directory is packed twice)',
    )
    .option(
      '--no-verify',
      'upload an archive without first reading it to its end and applying the MME rules (validate --mme); only its ' +
        'gzip magic is checked',
    )
    .action(async (path: string, options: import('./push').PushOptions) => {
      const { runPush } = await import('./push');
      const notice = '\nCancelling: aborting the multipart upload so no parts are left behind (Ctrl-C again to quit at once)...\n';
      setExit(await cancellable(io, { notice }, ({ signal, onQuit }) => runPush(path, { ...options, signal, onQuit }, io)));
    });
  addLocationOptions(program.command('list').description('List every TargetModel under the endpoint\'s S3 prefix ' +
    'with its size and last change.'))
    .action(async (options: import('./aws-options').ModelLocationCommandOptions) => {
      const { runList } = await import('./list');
      setExit(await runList(options, io));
    });
  addLocationOptions(
    program
      .command('remove')
      .description('Delete a TargetModel from the endpoint\'s S3 prefix (instances keep a loaded copy until it is evicted).')
      .argument('<target-model>', 'the TargetModel name, as `list` shows it'),
  )
    .option('--yes', 'delete without asking')
    .action(async (target: string, options: import('./remove').RemoveOptions) => {
      const { runRemove } = await import('./remove');
      setExit(await runRemove(target, options, io));
    });
  addInvokeInputOptions(addAwsOptions(
    program
      .command('invoke')
      .description('Call InvokeEndpoint on one TargetModel with KServe v2 inputs built from files and sentences; print the outputs.')
      .argument('[target-model]', 'the TargetModel to invoke, as `list` shows it, e.g. model.tar.gz (required)'),
  ))
    .option('--endpoint <name>', 'the multi-model endpoint (required)')
    // The TargetModel was an option before it was an argument, as in `remove` and `local invoke`: still taken, not shown.
    .addOption(new Option('--target-model <name>', 'deprecated: give the TargetModel as the first argument').hideHelp())
    .option('--model <archive-or-dir>', 'the TargetModel\'s archive or repository, read for input names, shapes and datatypes')
    .option('--variant <name>', 'send to this production variant (TargetVariant)')
    .option('--timeout <seconds>', described('give up waiting for the answer after this long', { default: '60, SageMaker\'s own limit' }))
    .option('--max-response <MiB>', described('refuse a response larger than this instead of holding it in memory', { default: '32' }))
    .action(async (target: string | undefined, options: import('./invoke').InvokeOptions) => {
      const { runInvoke, targetModelOf } = await import('./invoke');
      const targetModel = targetModelOf(target, options, io);
      setExit(await cancellable(io, {}, ({ signal }) => runInvoke({ ...options, targetModel }, io, signal)));
    });
  addAwsOptions(
    program
      .command('status')
      .description(
        'Show the endpoint, its instances and auto scaling, the last hour of model-cache and GPU metrics, and the ' +
          "hour's model failures from the logs.",
      ),
  )
    .option('--endpoint <name>', 'the multi-model endpoint (required)')
    .option('--variant <name>', described('the production variant', { default: 'the only one' }))
    .action(async (options: import('./status').StatusOptions) => {
      const { runStatus } = await import('./status');
      setExit(await runStatus(options, io));
    });

  addAwsOptions(
    program
      .command('logs')
      .description(
        "Show what happened on the endpoint's instances, from CloudWatch Logs: model loads, failures with their " +
          'cause and fix, evictions, python tracebacks. Failed requests are logged only with verbose logging on ' +
          '(the default; SAGEMAKER_TRITON_LOG_VERBOSE=0 turns it off).',
      ),
    'print one JSON object per event, one per line',
  )
    .option('--endpoint <name>', 'the multi-model endpoint (required)')
    .option('--since <when>', described('start of the window: a duration back from now (30m, 1h, 2d) or an ISO 8601 time', {
      default: '1h',
    }), '1h')
    .option('--target-model <name>', described('only the events of this TargetModel', { default: 'every TargetModel' }))
    .option('--variant <name>', 'only the instances of this production variant')
    .option('-f, --follow', 'keep reading new lines until Ctrl-C')
    .option('--poll-interval <seconds>', described('with --follow, seconds between two reads of new lines', { default: '5' }))
    .action(async (options: import('./logs').LogsOptions) => {
      const { runLogs } = await import('./logs');
      // Ctrl-C, SIGTERM or SIGHUP stops a follow (or a long read) cleanly; a second one quits at once.
      setExit(await cancellable(io, {}, ({ signal }) => runLogs(options, io, signal)));
    });

  // Measuring a live endpoint (issue 25): smoke after a deploy, loadtest against plan's prediction.
  addAwsOptions(
    program
      .command('smoke')
      .description('Invoke every TargetModel (or those named) once cold and a few times warm with inputs made from its ' +
        'config, check each answer against the config, and exit 1 when any fails.')
      .argument('[target-models...]', described('TargetModels to check', { default: 'every one under the endpoint\'s S3 prefix' })),
  )
    .option('--endpoint <name>', 'the multi-model endpoint (required)')
    .option('--variant <name>', 'the production variant to follow when the endpoint has several')
    .option('--warm <n>', described('warm invocations per TargetModel after the cold one', { default: '5' }))
    .option('--shape <shapes>', described('INPUT=1,3,224,224 for inputs with variable dims, `;` or space separated', {
      default: '1 for each',
    }))
    .action(async (names: string[], options: import('./smoke').EndpointSmokeOptions) => {
      const { runSmoke } = await import('./smoke');
      setExit(await cancellable(io, {}, ({ signal }) => runSmoke(names, options, io, signal)));
    });
  local
    .command('smoke')
    .description('Invoke every model `local load` loaded (or those named) once and a few times more with inputs made from ' +
      'its config, check each answer, and exit 1 when any fails.')
    .argument('[target-models...]', described('TargetModel names given at load', { default: 'every one in --models-dir' }))
    .option('--models-dir <dir>', localDirHelp)
    .option('--url <url>', localUrlHelp)
    .option('--warm <n>', described('warm invocations per TargetModel after the first', { default: '5' }))
    .option('--shape <shapes>', described('INPUT=1,3,224,224 for inputs with variable dims, `;` or space separated', {
      default: '1 for each',
    }))
    .option('--json', 'print one JSON report on stdout')
    .action(async (names: string[], options: import('./smoke').LocalSmokeOptions) => {
      const { runLocalSmoke } = await import('./smoke');
      setExit(await cancellable(io, {}, ({ signal }) => runLocalSmoke(names, options, io, signal)));
    });
  addAwsOptions(
    program
      .command('loadtest')
      .description('Send traffic over the endpoint\'s TargetModels as `plan` models it; report throughput, latency ' +
        'percentiles and errors per TargetModel, and the model cache metrics beside plan\'s prediction.')
      .argument('[target-models...]', described('TargetModels to load, in zipf rank order', {
        default: 'every one under the S3 prefix, in key order',
      })),
    'print one JSON report on stdout, with every request\'s record',
  )
    .option('--endpoint <name>', 'the multi-model endpoint (required)')
    .option('--variant <name>', 'the production variant to follow when the endpoint has several')
    .option('--rate <n>', 'open loop: requests per second, each sent at its intended time (this or --concurrency)')
    .option('--concurrency <n>', 'closed loop: requests kept in flight (this or --rate)')
    .option('--duration <seconds>', 'measure this long after the warm-up (this or --requests)')
    .option('--requests <n>', 'measure this many requests after the warm-up (this or --duration)')
    .option('--warmup <seconds>', described('seconds of traffic sent first and left out of the figures', { default: '10' }))
    .option('--traffic <spec>', described('uniform, zipf:S, or a CSV file of model,weight', { default: 'uniform' }))
    .option('--seed <n>', described('seed of the choice of TargetModel per request', { default: '1' }))
    .option('--resident <n>', 'models one instance keeps loaded, as `plan` reports: adds plan\'s cache prediction')
    .option('--cold-seconds <s>', described('load time plan assumes', {
      default: 'the run\'s mean ModelDownloadingTime + ModelLoadingTime per load',
    }))
    .option('--metrics-wait <seconds>', described('how long to wait for CloudWatch to publish the run\'s metrics', { default: '180' }))
    .option('--shape <shapes>', described('INPUT=1,3,224,224 for inputs with variable dims', { default: '1 for each' }))
    .option('--csv <file>', 'write one line per request (intended and sent time, latency, cause)')
    .option('--force', 'let --csv replace an existing file')
    .option('--yes', 'send without asking, whatever the estimated invocation count')
    .action(async (names: string[], options: import('./loadtest').LoadTestCommandOptions) => {
      const { runLoadTestCommand } = await import('./loadtest');
      const notice = '\nStopping: no more requests are sent; waiting for the answers on their way (Ctrl-C again to quit at once)...\n';
      setExit(await cancellable(io, { notice }, ({ signal }) => runLoadTestCommand(names, options, io, signal)));
    });
  // End of the measuring commands.

  const configure = (command: Command) => {
    command.exitOverride().configureOutput(outputFor(io, () => command));
    command.commands.forEach(configure);
  };
  program.commands.forEach(configure);
  addHelpSections(program, COMMAND_HELP);
  return program;
}

/** Commander's output: a usage error is one line, `mme-deploy: <what> (see `mme-deploy <command> --help`)`. */
function outputFor(io: CliIo, command: () => Command) {
  return {
    writeOut: (s: string) => io.stdout(s),
    writeErr: (s: string) => io.stderr(s),
    outputError: (s: string, write: (s: string) => void) =>
      write(`mme-deploy: ${s.replace(/^error: /, '').trimEnd()} (see \`${`mme-deploy ${commandPath(command())}`.trim()} --help\`)\n`),
  };
}

/** withCancellation (signals.ts), loaded with the long commands that use it. */
async function cancellable<T>(io: CliIo, options: CancellationOptions, action: (c: Cancellation) => Promise<T>): Promise<T> {
  const { withCancellation } = await import('./signals');
  return withCancellation(io, options, action);
}

function packageVersion(): string {
  // The same code runs from lib/ (tests) and dist/lib/ (the installed CLI): walk up to our package.json.
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mme-deploy' && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
}


