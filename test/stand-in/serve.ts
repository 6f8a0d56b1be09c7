// Runs the MME stand-in on 127.0.0.1 until Ctrl-C, for trying `smoke` and `loadtest` by hand (docs/live-endpoint.md):
//   npx tsx test/stand-in/serve.ts <dir of *.tar.gz> [--capacity 4] [--load-ms 50] [--infer-ms 0] [--port 0]
//                                  [--fault NAME=load-fails|out-of-memory|wrong-shape|wrong-datatype|missing-output]...
// It prints the AWS_ENDPOINT_URL to export; the endpoint is `mme`.

import { MmeStandIn, StandInFault } from './mme-stand-in';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args.splice(i, 2)[1]) : fallback;
  };
  const faults = new Map<string, StandInFault>();
  for (let i = args.indexOf('--fault'); i >= 0; i = args.indexOf('--fault')) {
    const [name, fault] = args.splice(i, 2)[1]!.split('=');
    faults.set(name!, fault as StandInFault);
  }
  const standIn = new MmeStandIn({
    capacity: option('--capacity', 4),
    loadMs: option('--load-ms', 50),
    inferMs: option('--infer-ms', 0),
  });
  const port = option('--port', 0);
  const dir = args[0];
  if (!dir) throw new Error('usage: serve.ts <directory of .tar.gz archives> [options]');
  await standIn.addDirectory(dir, faults);
  const url = await standIn.start(port);
  process.stdout.write(`export AWS_ENDPOINT_URL=${url}   # endpoint mme, capacity ${standIn.capacity}, load ${standIn.loadMs} ms\n`);
  process.on('SIGINT', () => void standIn.stop().then(() => process.exit(0)));
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
});
