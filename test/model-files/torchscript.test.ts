// The TorchScript reader against archives written by test/model-files/torchscript-writer.ts (torch.jit.save's layout,
// no PyTorch needed), against files that are not TorchScript, and against archives real torch.jit.save writes.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ByteSource } from '../../lib/model-files/protobuf-wire';
import { readTorchScript } from '../../lib/model-files/torchscript';
import { itWithTools } from '../tools';
import { torchScript, zip } from './torchscript-writer';

/** A file in memory that records the byte ranges read. */
function recorded(b: Buffer): ByteSource & { ranges: [number, number][] } {
  const ranges: [number, number][] = [];
  return {
    size: b.length,
    ranges,
    read: (buffer, length, position) => {
      const n = b.copy(buffer, 0, position, position + length);
      ranges.push([position, position + n]);
      return n;
    },
  };
}

const forwardOf = (b: Buffer) => {
  const read = readTorchScript(recorded(b));
  if (!read.ok) throw new Error(read.reason);
  return read.model.forward?.map((a) => `${a.name}: ${a.type} (${a.kind})`);
};

describe('TorchScript reader', () => {
  it("reads the root module's forward (not another class's), with each argument's name, type and kind", () => {
    expect(forwardOf(torchScript({ forward: 'input_ids: Tensor, mask: Tensor' }))).toEqual([
      'self: __torch__.Net (class)',
      'input_ids: Tensor (tensor)',
      'mask: Tensor (tensor)',
    ]);
    expect(forwardOf(torchScript({ forward: 'texts: List[str], inputs: Dict[str, Tensor], n: int=3', storedCode: true }))).toEqual([
      'self: __torch__.Net (class)',
      'texts: List[str] (list)',
      'inputs: Dict[str, Tensor] (dict)',
      'n: int (other)',
    ]);
  });

  it('finds a traced module whose class lives in a mangled sub-module, in an archive named after the file', () => {
    const b = torchScript({ forward: 'x: Tensor', module: '__torch__.___torch_mangle_1', archive: 'model' });
    expect(forwardOf(b)).toEqual(['self: __torch__.___torch_mangle_1.Net (class)', 'x: Tensor (tensor)']);
  });

  it('reads the zip directory, data.pkl and one code file, never the tensors under data/', () => {
    const b = torchScript({ forward: 'x: Tensor', weightBytes: 1024 * 1024 });
    const source = recorded(b);
    expect(readTorchScript(source).ok).toBe(true);
    const weightsAt = b.indexOf(Buffer.from('archive/data/0')) + 'archive/data/0'.length;
    const weights: [number, number] = [weightsAt, weightsAt + 1024 * 1024];
    expect(source.ranges.filter(([from, to]) => from < weights[1] && to > weights[0])).toEqual([]);
    expect(source.ranges.reduce((sum, [from, to]) => sum + to - from, 0)).toBeLessThan(70 * 1024);
  });

  it('says what a file is when it is not a TorchScript archive', () => {
    expect(readTorchScript(recorded(Buffer.alloc(0)))).toEqual({ ok: false, reason: 'is empty' });
    expect(readTorchScript(recorded(Buffer.from('stand-in for model.pt\n')))).toEqual({
      ok: false,
      reason: 'is not a TorchScript archive (the zip torch.jit.save writes): it is not a zip file (no end of central directory record)',
    });
    expect(readTorchScript(recorded(torchScript({ forward: 'x: Tensor', noCode: true })))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('is a zip but not a TorchScript archive: it has no code/ (written by torch.save'),
    });
    expect(readTorchScript(recorded(zip([{ name: 'weights.bin', data: Buffer.alloc(8) }])))).toEqual({
      ok: false,
      reason: 'is a zip but not a TorchScript archive: it has no data.pkl',
    });
    // Cut short: the end record is gone with the tail.
    const whole = torchScript({ forward: 'x: Tensor' });
    expect(readTorchScript(recorded(whole.subarray(0, whole.length - 30)))).toMatchObject({ ok: false });
  });

  it('says why when the root class has no forward in the code', () => {
    const stored = torchScript({ forward: 'x: Tensor', storedCode: true }).toString('latin1');
    const renamed = Buffer.from(stored.replace('def forward(self: __torch__.Net', 'def forwarx(self: __torch__.Net'), 'latin1');
    expect(readTorchScript(recorded(renamed))).toEqual({
      ok: true,
      model: { rootClass: '__torch__.Net', unknown: 'code/__torch__.py has no forward for Net' },
    });
  });

  itWithTools('reads what torch.jit.save writes: scripted and traced modules, a Dict input', { python: ['torch'] }, (found) => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-torchscript-'));
    try {
      const script = `
import sys, torch
from typing import Dict
class Pair(torch.nn.Module):
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return input_ids + attention_mask
class Named(torch.nn.Module):
    def forward(self, inputs: Dict[str, torch.Tensor]) -> torch.Tensor:
        return inputs["x"]
out = sys.argv[1]
torch.jit.save(torch.jit.script(Pair()), out + "/scripted.pt")
torch.jit.save(torch.jit.trace(Pair(), (torch.zeros(2), torch.zeros(2))), out + "/traced.pt")
torch.jit.save(torch.jit.script(Named()), out + "/dict.pt")
`;
      // TorchScript compiles from the source file, so the script is a file.
      writeFileSync(join(dir, 'save.py'), script);
      const run = spawnSync(found.python!, [join(dir, 'save.py'), dir], { encoding: 'utf8', timeout: 120_000 });
      if (run.status !== 0) throw new Error(run.stderr);
      const args = (file: string) => forwardOf(readFileSync(join(dir, file)))!.slice(1);
      expect(args('scripted.pt')).toEqual(['input_ids: Tensor (tensor)', 'attention_mask: Tensor (tensor)']);
      expect(args('traced.pt')).toEqual(['input_ids: Tensor (tensor)', 'attention_mask: Tensor (tensor)']);
      expect(args('dict.pt')).toEqual(['inputs: Dict[str, Tensor] (dict)']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
