// Diagnostics: the type every check returns, the one builder, the caret excerpt and did-you-mean suggestions.

export * from './diagnostic';
export { caretExcerpt } from './excerpt';
export { closest } from './did-you-mean';
