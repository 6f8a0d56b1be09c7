// Diagnostics: the type every check returns, the one builder, the caret excerpt, did-you-mean suggestions and the
// few names a message lists.

export * from './diagnostic';
export { caretExcerpt } from './excerpt';
export { closest } from './did-you-mean';
export { fewNames } from './few-names';
