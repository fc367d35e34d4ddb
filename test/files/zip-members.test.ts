// Reading a zip archive's members from its central directory: an .xlsx as Excel lays it out,
// members written with data descriptors (as LibreOffice and streaming writers do), stored and
// deflated. And what two unzip tools could read differently is refused, naming why: a second end
// record, bytes that belong to no member, overlapping members, a local header that disagrees.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TooManyMembers, UnreadableZip, zipMembers } from '../../src/files/zip-members.js';
import { mulberry32 } from '../support/seeded-random.js';
import { xlsxOf, zipOf } from '../support/zip-builder.js';

const text = (s: string) => Buffer.from(s);

function refusal(archive: Buffer, maxMembers = 10_000): string {
  try {
    zipMembers(archive, maxMembers);
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableZip);
    return (error as Error).message;
  }
  throw new Error('the archive was read');
}

describe('zip members', () => {
  it('an .xlsx: every part, in order, deflated, with the sizes its headers state', () => {
    const members = zipMembers(xlsxOf(['quarterly numbers', 'a second cell']), 10_000);
    expect(members.map((m) => m.name)).toEqual([
      '[Content_Types].xml',
      '_rels/.rels',
      'xl/workbook.xml',
      'xl/_rels/workbook.xml.rels',
      'xl/worksheets/sheet1.xml',
      'xl/sharedStrings.xml',
    ]);
    const strings = members.at(-1)!;
    expect(strings.method).toBe(8);
    expect(strings.encrypted).toBe(false);
    const inflated = inflateRawSync(strings.data);
    expect(inflated.length).toBe(strings.declaredSize);
    expect(inflated.toString()).toContain('<t>quarterly numbers</t>');
  });

  it('stored members, data descriptors (with zeros in the local header), an empty archive, a comment', () => {
    const archive = zipOf(
      [
        { name: 'mimetype', bytes: text('application/vnd.oasis.opendocument.text'), method: 0 },
        {
          name: 'content.xml',
          bytes: text('<office:document-content>words</office:document-content>'),
          dataDescriptor: true,
        },
        { name: 'Configurations2/', bytes: Buffer.alloc(0), method: 0 },
      ],
      { comment: text('made by a test') },
    );
    const members = zipMembers(archive, 10_000);
    expect(members.map((m) => [m.name, m.method])).toEqual([
      ['mimetype', 0],
      ['content.xml', 8],
      ['Configurations2/', 0],
    ]);
    expect(members[0]!.data.toString()).toBe('application/vnd.oasis.opendocument.text');
    expect(inflateRawSync(members[1]!.data).toString()).toContain('words');
    expect(zipMembers(zipOf([]), 10_000)).toEqual([]);
  });

  it('an encrypted member and another method are handed back as such (the reader refuses them)', () => {
    const members = zipMembers(
      zipOf([
        {
          name: 'secret.txt',
          bytes: text('x'.repeat(40)),
          flags: 1,
          method: 0,
          data: Buffer.alloc(52, 0x5a),
          declaredSize: 40,
        },
        { name: 'big.xml', bytes: text('y'), method: 14, data: Buffer.alloc(30, 1) },
      ]),
      10_000,
    );
    expect(members.map((m) => [m.name, m.encrypted, m.method])).toEqual([
      ['secret.txt', true, 0],
      ['big.xml', false, 14],
    ]);
  });

  it('no end record, or two that could each be the real one (a second hidden in the comment)', () => {
    expect(refusal(text('PK\x03\x04 not really a zip'))).toContain('no end of central directory record');
    const inner = zipOf([{ name: 'hidden.txt', bytes: text('hidden') }]);
    // The outer comment ends with a whole archive, whose own end record also ends the file.
    expect(refusal(zipOf([{ name: 'shown.txt', bytes: text('shown') }], { comment: inner }))).toContain(
      'more than one end of central directory record',
    );
  });

  it('bytes that belong to no member: a prefix (a self-extracting stub), a gap between members, a tail before the directory', () => {
    const archive = zipOf([
      { name: 'a.txt', bytes: text('first member') },
      { name: 'b.txt', bytes: text('second member') },
    ]);
    const first = zipMembers(archive, 10).at(0)!;
    const firstEnd = first.data.byteOffset - archive.byteOffset + first.data.length;
    const shift = (at: number, extra: Buffer) => {
      // Insert bytes at `at` and move every offset past it along, so only the gap is wrong.
      const moved = Buffer.concat([archive.subarray(0, at), extra, archive.subarray(at)]);
      const end = moved.length - 22;
      moved.writeUInt32LE(moved.readUInt32LE(end + 16) + extra.length, end + 16);
      let entry = moved.readUInt32LE(end + 16);
      for (let i = 0; i < 2; i++) {
        const offset = moved.readUInt32LE(entry + 42);
        if (offset >= at) moved.writeUInt32LE(offset + extra.length, entry + 42);
        entry += 46 + moved.readUInt16LE(entry + 28);
      }
      return moved;
    };
    expect(refusal(shift(0, text('MZ stub')))).toContain('bytes before its member "a.txt" belong to no member');
    const hidden = Buffer.concat([text('PK\x03\x04'), deflateRawSync(text('a member no directory lists'))]);
    expect(refusal(shift(firstEnd, hidden))).toContain('bytes before its member "b.txt" belong to no member');
  });

  it("two entries sharing one member's data (how a non-recursive zip bomb reuses a stream)", () => {
    const archive = zipOf([
      { name: 'a.txt', bytes: text('one') },
      { name: 'b.txt', bytes: text('one') },
    ]);
    const end = archive.length - 22;
    const directory = archive.readUInt32LE(end + 16);
    const second = directory + 46 + archive.readUInt16LE(directory + 28);
    archive.writeUInt32LE(0, second + 42);
    expect(refusal(archive)).toContain('its member "b.txt" overlaps another');
  });

  it('a local header that disagrees with the central directory (another method, name or size)', () => {
    const archive = zipOf([{ name: 'report.xml', bytes: text('<r>numbers</r>') }]);
    archive.writeUInt16LE(0, 8); // the local header says stored; the directory says deflate
    expect(refusal(archive)).toContain(
      'its member "report.xml" has a local header that disagrees with its central directory entry',
    );
  });

  it('ZIP64 records, more members than asked for, a damaged directory', () => {
    const archive = zipOf([{ name: 'a.txt', bytes: text('a') }]);
    const zip64 = Buffer.from(archive);
    zip64.writeUInt32LE(0xffffffff, zip64.length - 22 + 16);
    expect(refusal(zip64)).toContain('ZIP64');
    const many = zipOf(Array.from({ length: 12 }, (_, i) => ({ name: `m${i}.txt`, bytes: text(`member ${i}`) })));
    expect(() => zipMembers(many, 11)).toThrow(TooManyMembers);
    expect(zipMembers(many, 12)).toHaveLength(12);
    const damaged = Buffer.from(archive);
    damaged.writeUInt32LE(0x12345678, damaged.readUInt32LE(damaged.length - 22 + 16));
    expect(refusal(damaged)).toContain('central directory is damaged');
  });

  it('a name with control characters is shown with them replaced, and a long one cut', () => {
    const archive = zipOf([{ name: `evil\nname\u0007${'x'.repeat(300)}`, bytes: text('a'), flags: 0 }]);
    const [member] = zipMembers(archive, 10);
    expect(member!.name.startsWith('evil?name?xxx')).toBe(true);
    expect(member!.name.length).toBeLessThanOrEqual(121);
  });

  it('any byte of an archive changed, or the archive cut short: members or a clear refusal, never another error', () => {
    const archive = xlsxOf(['Region', 'North', 'South']);
    const random = mulberry32(7);
    for (let round = 0; round < 3000; round++) {
      const bent = Buffer.from(archive);
      for (let changes = 1 + Math.floor(random() * 3); changes > 0; changes--)
        bent[Math.floor(random() * bent.length)] = Math.floor(random() * 256);
      const cut = round % 10 === 0 ? bent.subarray(0, Math.floor(random() * bent.length)) : bent;
      try {
        zipMembers(cut, 10_000);
      } catch (error) {
        expect(error).toBeInstanceOf(UnreadableZip);
      }
    }
  });
});
