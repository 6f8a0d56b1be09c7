// What `mme-deploy package` leaves out of an archive: by-products of tools that are never part of a model. The
// validator uses the same list so that the MME archive rules judge the repository as it will be packed.

/**
 * Name patterns left out, each with the reason shown to the user. Only names that are certainly by-products are
 * here: `*.bak` and `*.orig`, for instance, are often made by hand and may be wanted, so they are packed.
 */
const EXCLUSIONS: readonly { readonly test: (name: string) => boolean; readonly reason: string }[] = [
  { test: (name) => name === '.git' || name === '.hg' || name === '.svn', reason: 'version-control metadata' },
  { test: (name) => name === '__pycache__', reason: 'Python bytecode cache (Triton recompiles model.py)' },
  { test: (name) => name === '.DS_Store', reason: 'macOS Finder metadata' },
  { test: (name) => name === '.ipynb_checkpoints', reason: 'Jupyter checkpoints' },
  {
    test: (name) => name.endsWith('~') || name.endsWith('.swp') || name.endsWith('.swo'),
    reason: 'editor backup or swap file',
  },
  {
    test: (name) => name.startsWith('.#') || (name.length > 1 && name.startsWith('#') && name.endsWith('#')),
    reason: 'Emacs lock or auto-save file',
  },
];

/**
 * Why a file or directory with this name (one path component) is left out of archives, or undefined when it is
 * packed. A left-out directory is left out with everything below it.
 */
export function excludedReason(name: string): string | undefined {
  return EXCLUSIONS.find((exclusion) => exclusion.test(name))?.reason;
}

/** Like `excludedReason`, for a relative POSIX path: excluded when any of its components is. */
export function excludedPathReason(path: string): string | undefined {
  for (const name of path.split('/')) {
    const reason = excludedReason(name);
    if (reason) return reason;
  }
  return undefined;
}
