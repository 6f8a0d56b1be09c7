// Sizes for people, in binary units, the same wherever the library or the CLI shows one.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 -> "1.5 KiB", 7 -> "7 B", 200 MiB -> "200 MiB" (no decimal from 100 up). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value >= 100 ? 0 : 1)} ${UNITS[unit]}`;
}
