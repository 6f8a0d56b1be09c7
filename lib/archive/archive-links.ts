// Links inside an archive being extracted: where a symbolic link really points once every link of the archive exists,
// so links that stay inside the extraction (conda environments are full of them) can be created and links that leave
// it refused. Pure path arithmetic over the archive's own entries: nothing on disk is followed.

/** How many links one lookup may pass through before it counts as a loop (Linux's MAXSYMLINKS). */
const MAX_HOPS = 40;

/**
 * Why the symbolic link at `linkPath` (archive-relative, `/`-separated) with target `target` would lead outside the
 * extraction root, or undefined when it stays inside. `symlinks` maps every symbolic link of the archive to its
 * target, so a target that passes through other links is followed as the kernel would follow it once all exist.
 * A target that names nothing in the archive is fine as long as it stays inside.
 */
export function linkEscapeReason(linkPath: string, target: string, symlinks: ReadonlyMap<string, string>): string | undefined {
  if (target.startsWith('/')) return `points to the absolute path "${target}"`;
  const resolved: string[] = linkPath.split('/').slice(0, -1);
  let pending = target.split('/');
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (resolved.length === 0) return `points to "${target}", outside the archive`;
      resolved.pop();
      continue;
    }
    resolved.push(part);
    const next = symlinks.get(resolved.join('/'));
    if (next === undefined) continue;
    if (++hops > MAX_HOPS) return `points to "${target}" through a loop of links`;
    if (next.startsWith('/')) return `points to "${target}", which passes through "${resolved.join('/')}" to the absolute path "${next}"`;
    // A link component is replaced by its target, read from the link's own directory.
    resolved.pop();
    pending = [...next.split('/'), ...pending];
  }
  return undefined;
}

/** Why a hard link's target (archive-relative, like every tar hard link) is unusable, or undefined when it is fine. */
export function hardLinkTargetReason(target: string, extractedFiles: ReadonlySet<string>): string | undefined {
  const normalized = target.replace(/^(\.\/)+/, '');
  if (normalized.startsWith('/') || normalized.split('/').includes('..')) return `is a hard link to "${target}", outside the archive`;
  if (!extractedFiles.has(normalized)) return `is a hard link to "${target}", which is not a regular file earlier in the archive`;
  return undefined;
}
