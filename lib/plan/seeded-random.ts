// A small seeded pseudo-random generator for the cache simulator, so the same `--seed` gives the same trace and the
// same report on every machine and Node version (Math.random cannot be seeded).

/** Returns numbers uniformly distributed in [0, 1). */
export type RandomSource = () => number;

/**
 * sfc32 (Chris Doty-Humphrey's "small fast counting" generator, 128-bit state) seeded through splitmix32.
 * Statistically sound for simulation, not for cryptography.
 */
export function seededRandom(seed: number): RandomSource {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  // Fold both halves of a 53-bit seed into the splitmix state so seeds above 2^32 stay distinct.
  let mix = (seed >>> 0) ^ Math.imul(Math.floor(seed / 0x1_0000_0000) >>> 0, 0x9e3779b1);
  const next32 = (): number => {
    mix = (mix + 0x9e3779b9) | 0;
    let z = mix;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = next32();
  let b = next32();
  let c = next32();
  let d = next32();
  const random = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 0x1_0000_0000;
  };
  // The first outputs of a freshly seeded sfc32 are correlated with the seed: discard a few.
  for (let i = 0; i < 12; i++) random();
  return random;
}
