import { TAR_BLOCK, decodeHeader, encodeHeaders, endOfArchive, parsePaxRecords, paxRecord, paxSize } from '../../lib/archive/tar-header';
import { rawHeader } from './crafted-archives';

describe('tar headers', () => {
  it('writes a plain ustar header for a short ASCII path, with fixed owner, time and normalized mode', () => {
    const block = encodeHeaders({ path: 'bert/1/model.pt', type: 'file', size: 1234, mode: 0o644 });
    expect(block.length).toBe(TAR_BLOCK);
    expect(decodeHeader(block, 0)).toEqual({
      name: 'bert/1/model.pt',
      mode: 0o644,
      size: 1234,
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
    expect(() => decodeHeader(block, 512)).toThrow(
      expect.objectContaining({ code: 'TAR_BAD_ARCHIVE', message: expect.stringMatching(/checksum mismatch at byte 512/) }),
    );
  });

  it.each([
    ['octal with leading blanks and a blank terminator', '   0000017 \u0000', 15],
    ['twelve octal digits with no terminator', '777777777777', 0o777777777777],
    ['GNU base-256 for sizes over 8 GiB', Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x01]), 513],
  ])('reads a size field written as %s', (_case, field, size) => {
    expect(
      decodeHeader(rawHeader({ name: 'a', size: typeof field === 'string' ? field.replace('\\u0000', '\u0000') : field }), 0)?.size,
    ).toBe(size);
  });

  it.each([
    ['a non-octal digit', '0000000008\u0000'],
    ['a sign', '-000000001\u0000'],
    ['a character after the terminator', '0000001\u0000x  '],
    ['no digits', '\u0000\u0000\u0000'],
    ['a negative base-256 value', Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe])],
    ['a base-256 value beyond 2^53', Buffer.from([0x80, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])],
  ])('refuses a size field with %s as TAR_BAD_SIZE', (_case, field) => {
    expect(() => decodeHeader(rawHeader({ name: 'a', size: field }), 1024)).toThrow(
      expect.objectContaining({ code: 'TAR_BAD_SIZE', message: expect.stringMatching(/^not a valid tar archive: bad size at byte 1024 /) }),
    );
  });

  it('parses PAX records, later keys winning, and refuses a record that breaks "<length> <key>=<value>\\n"', () => {
    const data = Buffer.from(paxRecord('path', 'a b=c') + paxRecord('size', '7') + paxRecord('path', 'é/x'));
    expect([...parsePaxRecords(data)]).toEqual([
      ['path', 'é/x'],
      ['size', '7'],
    ]);
    expect(() => parsePaxRecords(Buffer.from('6 k=v\nx'), 512)).toThrow(/malformed PAX extended header at byte 518 \(missing length\)/);
    expect(() => parsePaxRecords(Buffer.from('05 k=v\n'))).toThrow(/record length 5 out of range/);
  });

  it('reads a PAX size as decimal digits only', () => {
    expect(paxSize('0')).toBe(0);
    expect(paxSize('9663676416')).toBe(9663676416);
    for (const bad of ['', ' 1', '1 ', '+1', '-1', '1e3', '0x10', '1.0', '9007199254740993']) expect(paxSize(bad)).toBeUndefined();
  });

  it('ends the archive with two zero blocks, padded to a 10 KiB record', () => {
    expect(endOfArchive(0).length).toBe(10240);
    expect((3 * 512 + endOfArchive(3 * 512).length) % 10240).toBe(0);
    expect(endOfArchive(9 * 512).length).toBe(2 * 512 + 9 * 512);
  });
});
