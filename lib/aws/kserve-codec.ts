// Moved to lib/kserve/kserve-codec.ts (the codec serves `local` and `invoke` alike); this re-export keeps imports
// written before the move compiling. Import from '../kserve/kserve-codec' in new code.
export * from '../kserve/kserve-codec';
