// Zip archives built byte by byte for the tests, laid out as Excel, Word and the `zip` tool lay
// them: each member's local header and data end to end, then the central directory, then the end
// record. An entry's options bend one thing at a time, to make what a damaged or hostile archive
// would be (an encrypted member, a size its header lies about, a data descriptor, another method).
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  /** The member's contents, uncompressed. */
  bytes: Buffer;
  /** 8 (deflate, the default), 0 (stored), or any other method number (its data then as given). */
  method?: number;
  /** General purpose flags (bit 0: encrypted; bit 3 is set by `dataDescriptor`). */
  flags?: number;
  /** The data as stored; by default `bytes` deflated (method 8) or as they are. */
  data?: Buffer;
  /** The uncompressed size the headers state; by default the real one. */
  declaredSize?: number;
  /** Sizes and CRC after the data (with its signature), zeros in the local header, as streaming writers do. */
  dataDescriptor?: boolean;
}

export function zipOf(entries: readonly ZipEntry[], options: { comment?: Buffer } = {}): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const method = entry.method ?? 8;
    const data = entry.data ?? (method === 8 ? deflateRawSync(entry.bytes) : entry.bytes);
    const flags = (entry.flags ?? 0) | (entry.dataDescriptor ? 0x0008 : 0) | 0x0800;
    const crc = crc32(entry.bytes);
    const size = entry.declaredSize ?? entry.bytes.length;
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : crc, 14);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : data.length, 18);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : size, 22);
    local.writeUInt16LE(name.length, 26);
    const descriptor = Buffer.alloc(entry.dataDescriptor ? 16 : 0);
    if (entry.dataDescriptor) {
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(data.length, 8);
      descriptor.writeUInt32LE(size, 12);
    }
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(flags, 8);
    header.writeUInt16LE(method, 10);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(data.length, 20);
    header.writeUInt32LE(size, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);
    central.push(header, name);
    parts.push(local, name, data, descriptor);
    offset += local.length + name.length + data.length + descriptor.length;
  }
  const directory = Buffer.concat(central);
  const comment = options.comment ?? Buffer.alloc(0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...parts, directory, end, comment]);
}

/** The parts of a small .xlsx, as Excel writes them: its cells' text sits in xl/sharedStrings.xml. */
export function xlsxOf(cells: readonly string[]): Buffer {
  const xml = (body: string) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${body}`);
  const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const rows = cells.map((_, i) => `<row r="${i + 1}"><c r="A${i + 1}" t="s"><v>${i}</v></c></row>`).join('');
  return zipOf([
    {
      name: '[Content_Types].xml',
      bytes: xml(
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      bytes: xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
      ),
    },
    {
      name: 'xl/workbook.xml',
      bytes: xml(
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
      ),
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      bytes: xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
      ),
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      bytes: xml(
        `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`,
      ),
    },
    {
      name: 'xl/sharedStrings.xml',
      bytes: xml(
        `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${cells.length}" uniqueCount="${cells.length}">${cells.map((cell) => `<si><t>${escape(cell)}</t></si>`).join('')}</sst>`,
      ),
    },
  ]);
}
