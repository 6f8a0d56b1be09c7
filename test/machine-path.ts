// Absolute paths of one machine, which no tracked file names (test/project-files.test.ts) and no oracle recording
// holds (test/oracle-recording.ts).

/**
 * Absolute paths that name one machine: a workspace or home directory, a user's tool install, a folder beside the
 * checkout. Paths of a container or an OS (/opt/ml/models, /dev/shm, /usr/lib/...) and example homes
 * (a made-up user's, HOMES) are not.
 */
// Assembled from parts, so that this file itself names no such path and is checked like every other file.
export const S = '/';
/** The workspace and the sibling folder of one machine, as names split in two (see above). */
export const WORKSPACE = ['wo', 'rk'].join('');
export const SIBLING = ['sha', 'red'].join('');
const HOMES = ['me', 'u', 'user', 'you'].join('|');
export const MACHINE_PATH = new RegExp(
  '(?<![\\w.])(' +
    [
      `\\${S}${WORKSPACE}\\${S}`,
      `\\${S}root\\${S}`,
      `\\${S}Users\\${S}[A-Za-z]`,
      `\\${S}home\\${S}(?!(${HOMES})\\${S})[a-z][\\w-]*\\${S}`,
      `\\${S}\\.pyenv\\${S}`,
      `\\.\\.\\${S}${SIBLING}\\${S}`,
      '[A-Z]:\\\\Users\\\\',
    ].join('|') +
    ')',
);
