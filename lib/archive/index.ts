// The archive library's public API: collect a repository's entries, stream them as a deterministic tar.gz,
// write that atomically, and read or safely extract tar.gz archives.

export { collectEntries, compareBytes } from './collect';
export type { ArchiveEntry, CollectOptions, CollectResult, FileIdentity } from './collect';
export { archivePathProblem } from './entry-names';
export { excludedPathReason, excludedReason } from './exclusions';
export { createTarGzStream } from './tar-gz';
export type { TarGzOptions } from './tar-gz';
export { ExtractionVerdict, extractTarGz, readTarGz, unsafeEntryReason } from './tar-reader';
export type { TarEntry, TarEntryHandler, TarEntryType } from './tar-reader';
export { writeStreamAtomically } from './write-file';
export type { WriteOptions, WrittenFile } from './write-file';
