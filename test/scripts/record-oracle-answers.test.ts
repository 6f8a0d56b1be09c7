// scripts/record-oracle-answers.js: what the suite's oracle calls staged becomes the recording (test/oracle-recording.ts).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { merge, ORACLES } from '../../scripts/record-oracle-answers';

describe('scripts/record-oracle-answers.js', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mme-record-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const protoc = () => ({ ...ORACLES.find((o) => o.name === 'protoc')!, file: join(dir, 'answers.json') });
  const stage = (name: string, content: object) => {
    mkdirSync(join(dir, 'stage'), { recursive: true });
    writeFileSync(join(dir, 'stage', name), JSON.stringify(content));
  };
  const header = { protoc: 'libprotoc 3.21.12', proto: 'abc', decoder: 'python protobuf 4.21.12' };

  it('writes the staged answers one per line, keys sorted, replacing the recording or adding to it', () => {
    stage('1-0.json', { ...header, answers: { b: { value: { parameters: { z: 1, a: [{ y: 2, b: 3 }] } }, accepted: true } } });
    stage('2-0.json', { ...header, answers: { a: { accepted: false, error: 'input:1:1: x' } } });
    expect(merge(protoc(), join(dir, 'stage'), false)).toBe(2);
    const written = readFileSync(join(dir, 'answers.json'), 'utf8');
    expect(written.split('\n').slice(2, 9)).toEqual([
      '  "protoc": "libprotoc 3.21.12",',
      '  "proto": "abc",',
      '  "decoder": "python protobuf 4.21.12",',
      '  "answers": {',
      '    "a": {"accepted":false,"error":"input:1:1: x"},',
      '    "b": {"accepted":true,"value":{"parameters":{"a":[{"b":3,"y":2}],"z":1}}}',
      '  }',
    ]);
    expect(JSON.parse(written).about).toMatch(/^protoc's verdict on each text/);

    // Adding (a run of some test files): kept answers stay; replacing (the whole suite): only the run's.
    rmSync(join(dir, 'stage'), { recursive: true });
    stage('3-0.json', { ...header, answers: { c: { accepted: true, value: { name: 'c' } } } });
    expect(merge(protoc(), join(dir, 'stage'), true)).toBe(3);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'answers.json'), 'utf8')).answers)).toEqual(['a', 'b', 'c']);
    expect(merge(protoc(), join(dir, 'stage'), false)).toBe(1);
    // A recording of another protoc is not added to: replaced.
    stage('4-0.json', { ...header, answers: { c: { accepted: true, value: { name: 'c' } } } });
    writeFileSync(join(dir, 'answers.json'), JSON.stringify({ ...header, protoc: 'libprotoc 0.1', answers: { z: {} } }));
    expect(merge(protoc(), join(dir, 'stage'), true)).toBe(1);
  });

  it('refuses answers given under two settings in one run, and writes nothing when nothing was staged', () => {
    stage('1-0.json', { ...header, answers: { a: {} } });
    stage('2-0.json', { ...header, proto: 'other', answers: { b: {} } });
    expect(() => merge(protoc(), join(dir, 'stage'), false)).toThrow(/protoc answered under two settings in one run/);
    expect(merge(protoc(), join(dir, 'nothing'), false)).toBeUndefined();
    expect(() => readFileSync(join(dir, 'answers.json'))).toThrow(/ENOENT/);
  });
});
