// Moved to lib/kserve/invoke-request.ts (it serves `local` and `invoke` alike); this re-export keeps imports written
// before the move compiling. Import from '../kserve/invoke-request' in new code.
export * from '../kserve/invoke-request';
