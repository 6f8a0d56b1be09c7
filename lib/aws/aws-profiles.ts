// Whether a named profile exists, checked before any client is made: the SDK's own failure for `--profile nosuch`
// ("Could not resolve credentials using profile") reads like missing credentials and sends people to `aws configure`
// for the wrong profile. Files and sections as the AWS CLI and SDKs read them (AWS CLI User Guide, "Configuration and
// credential file settings", https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html, read
// 2026-11-30): ~/.aws/config names `[default]` and `[profile NAME]`, ~/.aws/credentials names `[NAME]`; the
// AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE variables move them.

import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { MmeError } from '../errors';
import { shellCommand } from '../shell-quote';

/** The profiles the shared config and credentials files define, sorted. */
export async function knownProfiles(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const home = env.HOME ?? env.USERPROFILE ?? homedir();
  const config = await readOptional(env.AWS_CONFIG_FILE ?? join(home, '.aws', 'config'));
  const credentials = await readOptional(env.AWS_SHARED_CREDENTIALS_FILE ?? join(home, '.aws', 'credentials'));
  const names = new Set<string>();
  // One word between the brackets (after `profile `): `[sso-session x]` and `[services x]` are not profiles.
  for (const [, name] of config.matchAll(/^\s*\[\s*(?:profile\s+)?([^\]\s]+)\s*\]/gm)) names.add(name!);
  for (const [, name] of credentials.matchAll(/^\s*\[\s*([^\]\s]+)\s*\]/gm)) names.add(name!);
  return [...names].sort();
}

/** Throws AWS_CONFIG when `profile` is given and no shared file defines it. */
export async function checkProfile(profile: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (profile === undefined) return;
  const known = await knownProfiles(env);
  if (known.includes(profile)) return;
  const files = `${env.AWS_CONFIG_FILE ?? '~/.aws/config'} and ${env.AWS_SHARED_CREDENTIALS_FILE ?? '~/.aws/credentials'}`;
  const list = known.length > 0 ? ` The profiles there: ${known.join(', ')}.` : ' There are no profiles there.';
  throw new MmeError(
    'AWS_CONFIG',
    `The AWS profile '${profile}' does not exist in ${files}.${list} Create it with ` +
      `\`${shellCommand(['aws', 'configure', '--profile', profile])}\` (or \`aws configure sso\`), or pass another --profile.`,
  );
}

async function readOptional(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}
