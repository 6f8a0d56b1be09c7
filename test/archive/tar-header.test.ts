import { TAR_BLOCK, decodeHeader, encodeHeaders, endOfArchive, parsePaxRecords, paxRecord } from '../../lib/archive/tar-header';

describe('tar headers', () => {
  it('writes a plain ustar header for a short ASCII path, with fixed owner, time and normalized mode', () => {
    const block = encodeHeaders({ path: 'bert/1/model.pt', type: 'file', size: 1234, mode: 0o644 });
    expect(block.length).toBe(TAR_BLOCK);
    expect(decodeHeader(block, 0)).toEqual({
      name: 'bert/1/model.pt',
      mode: 0o644,
      size: 1234,
      mtime: 0,
      typeflag: '0',
      linkName: '',
    });
    expect(block.toString('latin1', 257, 265)).toBe('ustar\u000000');
    expect(block.subarray(265, 329).every((b) => b === 0)).toBe(true); // empty uname and gname
  });

  it('adds the trailing slash to directory names', () => {
    expect(decodeHeader(encodeHeaders({ path: 'bert/1', type: 'directory', size: 0, mode: 0o755 }), 0)).toMatchObject({
      name: 'bert/1/',
      typeflag: '5',
      size: 0,
    });
  });

  it('puts long and non-ASCII paths in a PAX record', () => {
    const path = `${'a'.repeat(150)}/é.txt`;
    const bytes = encodeHeaders({ path, type: 'file', size: 1, mode: 0o644 });
    const pax = decodeHeader(bytes.subarray(0, TAR_BLOCK), 0)!;
    expect(pax.typeflag).toBe('x');
    expect(parsePaxRecords(bytes.subarray(TAR_BLOCK, TAR_BLOCK + pax.size)).get('path')).toBe(path);
    expect(bytes.length % TAR_BLOCK).toBe(0);
  });

  it('records sizes over 8 GiB in PAX, since the octal field stops there', () => {
    const size = 9 * 1024 ** 3;
    const bytes = encodeHeaders({ path: 'llm/1/model.bin', type: 'file', size, mode: 0o644 });
    const pax = decodeHeader(bytes.subarray(0, TAR_BLOCK), 0)!;
    expect(parsePaxRecords(bytes.subarray(TAR_BLOCK, TAR_BLOCK + pax.size)).get('size')).toBe(String(size));
  });

  it.each([
    ['k', 'v'], // 6-byte record: one digit
    ['path', 'x'.repeat(90)], // crosses from two to three digits
    ['path', 'x'.repeat(993)], // crosses from three to four digits
  ])('counts the length digits into a PAX record\'s length (%s)', (key, value) => {
    const record = paxRecord(key, value);
    expect(Number.parseInt(record, 10)).toBe(Buffer.byteLength(record));
  });

  it('rejects a header whose checksum does not match', () => {
    const block = encodeHeaders({ path: 'a', type: 'file', size: 1, mode: 0o644 });
    block[0] = 'b'.charCodeAt(0);
    expect(() => decodeHeader(block, 512)).toThrow(/checksum mismatch at byte 512/);
  });

  it('ends the archive with two zero blocks, padded to a 10 KiB record', () => {
    expect(endOfArchive(0).length).toBe(10240);
    expect((3 * 512 + endOfArchive(3 * 512).length) % 10240).toBe(0);
    expect(endOfArchive(9 * 512).length).toBe(2 * 512 + 9 * 512);
  });
});
