// `local` as registered in the CLI grammar: its subcommands, their help, and usage errors that exit 2 in-process.

import { main } from '../../lib/cli/program';
import { captureIo } from '../cli/run-cli';

describe('mme-deploy local (command grammar)', () => {
  it('lists load, invoke, unload and list in its help', async () => {
    const io = captureIo({ env: {} });
    expect(await main(['local', '--help'], io)).toBe(0);
    for (const sub of ['load', 'invoke', 'unload', 'list']) expect(io.out()).toMatch(new RegExp(`^\\s+${sub}\\b`, 'm'));
  });

  it('documents the flags `invoke` shares with the endpoint command', async () => {
    const io = captureIo({ env: {} });
    expect(await main(['local', 'invoke', '--help'], io)).toBe(0);
    for (const flag of ['--input', '--text', '--body', '--binary', '--json', '--top', '--url', '--models-dir']) {
      expect(io.out()).toContain(flag);
    }
  });

  it('documents --cpu in the help of load, the one subcommand that stages an archive', async () => {
    const io = captureIo({ env: {} });
    expect(await main(['local', 'load', '--help'], io)).toBe(0);
    expect(io.out().replace(/\s+/g, ' ')).toContain('--cpu stage for a container without a GPU (docker run without --gpus)');
  });

  it('exits 2 with a usage message when the archive is missing', async () => {
    const io = captureIo({ env: {} });
    expect(await main(['local', 'load'], io)).toBe(2);
    expect(io.err()).toContain("missing required argument 'archive'");
  });

  it('reaches the command and reports an unreachable container as a usage problem (start one, or fix --url): exit 2', async () => {
    const io = captureIo({ env: {} });
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    expect(await main(['local', 'unload', 'x.tar.gz', '--url', 'http://127.0.0.1:1'], io)).toBe(2);
    expect(io.err()).toContain('No container answers at http://127.0.0.1:1');
  });
});
