// The errors the archive reader raises for a damaged or foreign file: what is wrong and where, then what to do.

import { MmeError } from '../errors';

// Generic on purpose: the reader also reads conda-pack environments, not only archives `mme-deploy package` made.
const REMEDY = 'The file is damaged or is not a tar.gz: create it or copy it again.';

/** An MmeError for a file that cannot be read as a tar(.gz): `detail` says what and where, a remedy follows. */
export function invalidArchive(
  detail: string,
  code: 'TAR_BAD_ARCHIVE' | 'TAR_BAD_SIZE' | 'TAR_TRUNCATED' = 'TAR_BAD_ARCHIVE',
): MmeError {
  return new MmeError(code, `${detail}. ${REMEDY}`);
}
