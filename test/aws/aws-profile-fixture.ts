// Named AWS profiles for a test suite: a temp ~/.aws/config holding them (AWS_CONFIG_FILE), since `--profile NAME`
// is refused when no shared file defines NAME.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function useAwsProfiles(names: readonly string[]): void {
  let dir: string;
  let previous: string | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aws-config-'));
    const file = join(dir, 'config');
    writeFileSync(file, names.map((name) => `[profile ${name}]\nregion = us-east-1\n`).join('\n'));
    previous = process.env.AWS_CONFIG_FILE;
    process.env.AWS_CONFIG_FILE = file;
  });
  afterAll(() => {
    if (previous === undefined) delete process.env.AWS_CONFIG_FILE;
    else process.env.AWS_CONFIG_FILE = previous;
    rmSync(dir, { recursive: true, force: true });
  });
}
