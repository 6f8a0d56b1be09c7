// The errors the archive reader raises for a damaged or foreign file: what is wrong and where, then what to do.

import { MmeError } from '../errors';

const REMEDY = 'The file is damaged or is not a tar.gz: package it again (mme-deploy package) or copy it again.';

/** An MmeError for a file that cannot be read as a tar(.gz): `detail` says what and where, a remedy follows. */
export function invalidArchive(
  detail: string,
  code: 'TAR_BAD_ARCHIVE' | 'TAR_BAD_SIZE' | 'TAR_TRUNCATED' = 'TAR_BAD_ARCHIVE',
): MmeError {
  return new MmeError(code, `${detail}. ${REMEDY}`);
}
