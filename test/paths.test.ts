import { isInside } from '../lib/paths';

describe('isInside', () => {
  it.each([
    ['/repo/m', '/repo/m', true],
    ['/repo/m', '/repo/m/labels.txt', true],
    ['/repo/m', '/repo/m/1/../labels.txt', true],
    ['/repo/m', '/repo/m/..data/x', true],
    ['/repo/m', '/repo/m/a/../../m/x', true],
    ['/repo/m', '/repo/labels.txt', false],
    ['/repo/m', '/repo/m/../n', false],
    ['/repo/m', '/repo/mx', false],
    ['/repo/m', '/repo', false],
    ['/repo/m', '/etc/passwd', false],
  ])('%s holds %s: %s', (dir, path, inside) => {
    expect(isInside(dir, path)).toBe(inside);
  });
});
