// test/oracle-recording.ts: what record mode stages for the record script.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S, WORKSPACE } from './machine-path';
import { RECORD_VARIABLE, stageAnswers } from './oracle-recording';

describe('stageAnswers', () => {
  const previous = process.env[RECORD_VARIABLE];
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mme-stage-'))));
  afterEach(() => {
    if (previous === undefined) delete process.env[RECORD_VARIABLE];
    else process.env[RECORD_VARIABLE] = previous;
    rmSync(dir, { recursive: true, force: true });
  });

  it('stages the header and the answers, leaving out an answer that names a path of one machine', () => {
    process.env[RECORD_VARIABLE] = dir;
    const machine = `${S}${WORKSPACE}${S}engines${S}model`;
    stageAnswers('protoc', { protoc: 'libprotoc 3.21.12' }, 'answers', {
      a: { accepted: true, value: { name: 'a', parameters: { dir: { string_value: '/opt/ml/models' } } } },
      b: { accepted: true, value: { name: 'b', parameters: { dir: { string_value: machine } } } },
    });
    const staged = readdirSync(join(dir, 'protoc'));
    expect(staged).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, 'protoc', staged[0]!), 'utf8'))).toEqual({
      protoc: 'libprotoc 3.21.12',
      answers: { a: { accepted: true, value: { name: 'a', parameters: { dir: { string_value: '/opt/ml/models' } } } } },
    });
  });

  it('stages nothing outside record mode', () => {
    delete process.env[RECORD_VARIABLE];
    stageAnswers('protoc', {}, 'answers', { a: {} });
    expect(readdirSync(dir)).toEqual([]);
  });
});
