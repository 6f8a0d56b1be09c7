// Each command's examples and what exit code 1 means for it: the one table the help's "Examples:" and "Exit codes:"
// sections are generated from (help-style.ts). test/cli/help-style.test.ts parses every example with the real
// grammar, so an example cannot name an option that is gone.

import type { CommandHelp } from './help-style';

export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = {
  '': {
    examples: [
      ['validate examples/sentiment_onnx --mme', "check a repository with Triton's rules and the MME archive rules"],
      ['package examples/sentiment_onnx -o build/', 'write the TargetModel archive an MME loads'],
      ['push build/sentiment_onnx.tar.gz --endpoint my-endpoint', "upload it under the endpoint's S3 prefix"],
      ['invoke sentiment_onnx.tar.gz --endpoint my-endpoint --text text="great movie"', 'call it'],
      ['local --help', 'the commands that drive a Triton container on this machine'],
    ],
    failure: 'the command failed (see its own help)',
  },
  validate: {
    examples: [
      ['validate models/', 'every model of a repository'],
      ['validate models/ --mme --json', 'also the MME archive rules, as one JSON report'],
      ['validate build/models.tar.gz', 'an archive made elsewhere, read to its end as SageMaker extracts it'],
      ['validate models/ --instance-type ml.g5.xlarge --triton-version 24.09', 'for that endpoint (TensorRT, Python)'],
      ['validate models/ --accept tensorrt-plan-target --strict', 'any other warning fails the check (exit 1)'],
    ],
    failure: 'the repository or archive has errors (or, with --strict, warnings not accepted)',
  },
  config: {
    examples: [['config models/text_encoder', "print the model's config.pbtxt as parsed, in JSON"]],
    failure: 'the config does not parse',
  },
  package: {
    examples: [
      ['package models/', 'write models.tar.gz in the current directory'],
      ['package models/ -o build/ --name sentiment.tar.gz', 'write build/sentiment.tar.gz'],
      ['package models/ -o models.tar.gz --force --level 9', 'replace an existing archive, compressing harder'],
      ['package models/ --instance-type ml.g5.xlarge --strict', 'refuse to write it if a warning for g5 remains'],
    ],
    failure: 'the repository breaks a rule (or, with --strict, has warnings not accepted); nothing is written',
    cancellable: true,
  },
  graph: {
    examples: [
      ['graph models/', 'the ensembles as a Mermaid flowchart'],
      ['graph models/ --format dot --ensemble pipeline', 'one ensemble in Graphviz dot'],
    ],
    failure: 'the repository cannot be drawn',
  },
  plan: {
    examples: [
      ['plan a.tar.gz b.tar.gz', 'memory, cost and cache behaviour on one ml.g4dn.xlarge'],
      ['plan models/ other/ --instance-type ml.g5.xlarge --instances 3 --traffic zipf:1.1', 'three instances, skewed traffic'],
      ['plan a.tar.gz --traffic trace.csv --json', 'replay a recorded trace, as JSON'],
    ],
    failure: 'the models do not fit, or a model cannot be read',
    cancellable: true,
  },
  local: {
    examples: [
      ['local load build/sentiment.tar.gz', 'extract it and send POST /models, as SageMaker does'],
      ['local invoke sentiment.tar.gz --text text="great movie"', 'call it'],
      ['local list', 'what the container has loaded'],
    ],
    failure: 'the container refused or failed the request',
  },
  'local load': {
    examples: [
      ['local load build/sentiment.tar.gz', 'load into the container at http://127.0.0.1:8080'],
      ['local load build/sentiment.tar.gz --url http://127.0.0.1:9080 --models-dir /tmp/models', 'another container'],
      ['local load build/sentiment.tar.gz --cpu', 'a container run without --gpus: KIND_GPU staged as KIND_CPU'],
    ],
    failure: 'the archive breaks a rule, or the container failed to load it',
    cancellable: true,
  },
  'local invoke': {
    examples: [
      ['local invoke sentiment.tar.gz --text text="great movie"', 'one BYTES input'],
      ['local invoke resnet.tar.gz --input INPUT__0=@cat.jpg --top 5', 'an image, the five best scores'],
    ],
    failure: 'the model answered with an error',
    cancellable: true,
  },
  'local unload': {
    examples: [['local unload sentiment.tar.gz', 'send DELETE /models/<hash>']],
    failure: 'the container refused to unload it',
  },
  'local list': {
    examples: [
      ['local list', 'models loaded and archives extracted'],
      ['local list --json', 'the same as JSON'],
    ],
    failure: 'the container answered with an error',
  },
  'local smoke': {
    examples: [
      ['local smoke', 'every model loaded, once and five times more'],
      ['local smoke sentiment.tar.gz --warm 20 --json', 'one model, 20 warm calls, as JSON'],
    ],
    failure: 'a model failed or gave an answer its config does not allow',
    cancellable: true,
  },
  push: {
    examples: [
      ['push build/sentiment.tar.gz --endpoint my-endpoint', "upload under the endpoint's ModelDataUrl"],
      ['push models/ --s3 s3://my-bucket/models/ --versioned', 'pack a directory and upload it under a content-named key'],
      ['push build/sentiment.tar.gz --endpoint my-endpoint --force', 'replace an existing TargetModel'],
    ],
    failure: 'the archive breaks a rule, the TargetModel exists, or AWS refused the upload',
    cancellable: true,
  },
  list: {
    examples: [
      ['list --endpoint my-endpoint', "every TargetModel under the endpoint's S3 prefix"],
      ['list --s3 s3://my-bucket/models/ --json', 'a prefix given directly, as JSON'],
    ],
    failure: 'AWS refused the listing',
  },
  remove: {
    examples: [
      ['remove sentiment.tar.gz --endpoint my-endpoint', 'delete it, after asking'],
      ['remove sentiment.tar.gz --s3 s3://my-bucket/models/ --yes', 'delete without asking'],
    ],
    failure: 'the TargetModel does not exist, or AWS refused the deletion',
  },
  invoke: {
    examples: [
      ['invoke sentiment.tar.gz --endpoint my-endpoint --text text="great movie"', 'one BYTES input'],
      ['invoke resnet.tar.gz --endpoint my-endpoint --model build/resnet.tar.gz --input INPUT__0=@cat.jpg --top 5',
        'an image, shapes from the archive'],
      ['invoke sentiment.tar.gz --endpoint my-endpoint --body request.json --json', 'a KServe v2 request as is'],
    ],
    failure: 'the model answered with an error, or AWS refused the call',
    cancellable: true,
  },
  status: {
    examples: [
      ['status --endpoint my-endpoint', 'the endpoint, its instances, scaling and the last hour'],
      ['status --endpoint my-endpoint --json --region eu-west-1', 'the same as JSON, in another region'],
    ],
    failure: 'the endpoint does not exist, or AWS refused a call',
  },
  logs: {
    examples: [
      ['logs --endpoint my-endpoint --since 30m', 'the last half hour, with causes and fixes'],
      ['logs --endpoint my-endpoint --target-model sentiment.tar.gz -f', "follow one TargetModel's events"],
    ],
    failure: 'the log group does not exist, or AWS refused the read',
    cancellable: true,
  },
  smoke: {
    examples: [
      ['smoke --endpoint my-endpoint', 'every TargetModel, cold and warm'],
      ['smoke sentiment.tar.gz --endpoint my-endpoint --warm 10', 'one TargetModel, ten warm calls'],
    ],
    failure: 'a TargetModel failed or gave an answer its config does not allow',
    cancellable: true,
  },
  loadtest: {
    examples: [
      ['loadtest --endpoint my-endpoint --rate 50 --duration 60 --traffic zipf:1.1 --resident 4',
        "open loop, 50 requests/s for a minute, beside plan's prediction"],
      ['loadtest a.tar.gz b.tar.gz --endpoint my-endpoint --concurrency 8 --requests 1000 --yes', 'closed loop, 1000 requests'],
    ],
    failure: 'the run could not be made, or AWS refused a call',
    cancellable: true,
  },
};
