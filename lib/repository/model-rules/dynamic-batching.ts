// §7 dynamic batching: preferred sizes within max_batch_size, priority levels and queue policies in range.

import { tritonName, type LoadedModel } from '../model';
import type { Reporter } from './reporter';

export function checkDynamicBatching(model: LoadedModel, r: Reporter) {
  const db = model.config.dynamic_batching;
  if (!db) return;
  const mbs = model.config.max_batch_size ?? 0;
  (db.preferred_batch_size ?? []).forEach((size, i) => {
    if (size <= 0) {
      r.error('preferred-batch-size-not-positive', db, 'preferred_batch_size',
        `dynamic batching preferred size must be positive for ${tritonName(model)}.`, i);
    } else if (size > mbs) {
      r.error('preferred-batch-size-too-large', db, 'preferred_batch_size',
        `dynamic batching preferred size must be <= max batch size for ${tritonName(model)} (${size} > max_batch_size ${mbs}).`, i);
    }
  });
  const levels = db.priority_levels ?? 0n;
  if (levels > 0n) {
    const level = db.default_priority_level ?? 0n;
    if (level < 1n || level > levels) {
      const field = db.default_priority_level !== undefined ? 'default_priority_level' : 'priority_levels';
      r.error('default-priority-level-range', db, field, `default priority level must be in range [1, ${levels}] ` +
        `for ${tritonName(model)}.`);
    }
  }
  const policies = db.priority_queue_policy ?? {};
  for (const key of Object.keys(policies)) {
    const level = BigInt(key);
    if (level < 1n || level > levels) {
      r.error('priority-queue-policy-range', policies, key, 'priority queue policy must have priority level in ' +
        `range [1, ${levels}] for ${tritonName(model)} (found ${key}).`);
    }
  }
  if (db.preserve_ordering) {
    if (levels > 1n) {
      r.error('preserve-ordering-priorities', db, 'preserve_ordering', 'Only one priority level is allowed when ' +
        `'preserve_ordering' is true for ${tritonName(model)}.`);
    }
    for (const policy of [db.default_queue_policy, ...Object.values(policies)]) {
      if (policy && policy.timeout_action === 'DELAY' && (policy.default_timeout_microseconds ?? 0n) !== 0n) {
        r.error('preserve-ordering-delay', policy, 'timeout_action', 'Queue policy can not have DELAY as timeout ' +
          `action when 'preserve_ordering' is true for ${tritonName(model)}.`);
      }
    }
  }
}
