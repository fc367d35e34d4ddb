// The members of a zip archive (and so of every .docx, .xlsx, .pptx, .odt, .ods, .jar, .epub),
// read from its central directory, for the check that looks inside a compressed file before it
// is posted. This module only parses: it hands back each member's stored bytes and how they are
// stored; inflating them, within bounds, is compressed-contents.ts's job.
//
// The one idea: the check must see what any unzip tool would extract. Readers disagree on a
// damaged or crafted archive (one trusts the central directory, another walks the local headers
// from the start, a third takes the last end record it finds), so anything two readers could
// read differently is refused as unreadable rather than guessed at: more than one end record
// that could be the real one, bytes that belong to no member (before, between or after them,
// where a hidden member could sit), members that overlap (also how a non-recursive zip bomb
// reuses one stream many times), a local header that disagrees with its central directory
// entry. Every writer of office files (Excel, Word, LibreOffice, openpyxl, Go's and Java's zip
// writers, Info-ZIP) lays members end to end, so a real document passes.
//
// ZIP64 (an archive over 4 GiB or 65,535 members; `zip` also writes it for a member read from a
// pipe) and archives split across disks are refused: nothing a bot attaches is that large, the
// check could not read it within its bounds anyway, and an office document of any ordinary size
// never uses it.

/** Why a zip archive cannot be read (said to the model after the archive's name). */
export class UnreadableZip extends Error {}

/** More members than the reader was asked to read: a bound, not damage. */
export class TooManyMembers extends UnreadableZip {}

export interface ZipMember {
  /** As the archive names it (UTF-8 when it says so, else read as Latin-1): for messages only. */
  name: string;
  /** 0 stored, 8 deflate; anything else the reader cannot inflate. */
  method: number;
  /** General purpose flag bit 0 (traditional or AES encryption), bit 6 (strong encryption): unreadable without the password. */
  encrypted: boolean;
  /** The member's bytes as stored in the archive (compressed with `method`): a view into it, not a copy. */
  data: Buffer;
  /** What the central directory says it inflates to: a claim, which the inflater holds it to. */
  declaredSize: number;
  /** The CRC-32 of its inflated bytes, as the central directory says. */
  crc: number;
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_RECORD = 0x06054b50;
const ZIP64_END_LOCATOR = 0x07064b50;
const DATA_DESCRIPTOR = 0x08074b50;
const LOCAL_HEADER_BYTES = 30;
const CENTRAL_HEADER_BYTES = 46;
const END_RECORD_BYTES = 22;
const ZIP64_END_LOCATOR_BYTES = 20;
/** The end record's comment is at most this long, so the record sits in the archive's last 64 KiB + 22 bytes. */
const MAX_COMMENT_BYTES = 0xffff;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_DATA_DESCRIPTOR = 0x0008;
const FLAG_STRONG_ENCRYPTION = 0x0040;
const FLAG_UTF8_NAME = 0x0800;
/** The flags a reader acts on, which the local header and the central directory must agree on. */
const FLAGS_THAT_MATTER = FLAG_ENCRYPTED | FLAG_DATA_DESCRIPTOR | FLAG_STRONG_ENCRYPTION;
const MAX_SHOWN_NAME = 120;
const ZIP64_REASON =
  'it has ZIP64 records (made for an archive over 4 GiB or 65,535 members, or one zipped from a pipe), which the check does not read';

interface CentralEntry {
  name: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  declaredSize: number;
  localOffset: number;
}

/**
 * The members of `archive`, in the order they are stored. Throws UnreadableZip when it is not
 * a zip this reader can vouch for (see the header), or has more than `maxMembers` members.
 */
export function zipMembers(archive: Buffer, maxMembers: number): ZipMember[] {
  const end = endRecord(archive);
  const count = archive.readUInt16LE(end + 10);
  const directorySize = archive.readUInt32LE(end + 12);
  const directoryOffset = archive.readUInt32LE(end + 16);
  if (
    archive.readUInt16LE(end + 4) !== 0 ||
    archive.readUInt16LE(end + 6) !== 0 ||
    archive.readUInt16LE(end + 8) !== count
  ) {
    throw new UnreadableZip('it is split across several disks');
  }
  if (
    count === 0xffff ||
    directorySize === 0xffffffff ||
    directoryOffset === 0xffffffff ||
    (end >= ZIP64_END_LOCATOR_BYTES && archive.readUInt32LE(end - ZIP64_END_LOCATOR_BYTES) === ZIP64_END_LOCATOR)
  ) {
    throw new UnreadableZip(ZIP64_REASON);
  }
  if (count > maxMembers)
    throw new TooManyMembers(`it has ${count} members, more than the ${maxMembers} the check reads`);
  if (directoryOffset + directorySize !== end)
    throw new UnreadableZip(
      'its central directory does not end where its end record starts: bytes between them belong to no member',
    );

  const entries = centralEntries(archive, directoryOffset, end, count);
  // Members laid end to end from the archive's first byte up to the central directory: no gap,
  // no overlap (see the header).
  const byOffset = [...entries].sort((a, b) => a.localOffset - b.localOffset);
  let cursor = 0;
  const members: ZipMember[] = [];
  for (const entry of byOffset) {
    const shown = nameOf(entry);
    if (entry.localOffset !== cursor) {
      throw new UnreadableZip(
        entry.localOffset > cursor
          ? `bytes before its member "${shown}" belong to no member`
          : `its member "${shown}" overlaps another`,
      );
    }
    const dataStart = localDataStart(archive, entry, shown, directoryOffset);
    const dataEnd = dataStart + entry.compressedSize;
    if (dataEnd > directoryOffset) throw new UnreadableZip(`its member "${shown}" runs into the central directory`);
    cursor = dataEnd + descriptorLength(archive, entry, dataEnd, directoryOffset, shown);
    members.push({
      name: shown,
      method: entry.method,
      encrypted: (entry.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) !== 0,
      data: archive.subarray(dataStart, dataEnd),
      declaredSize: entry.declaredSize,
      crc: entry.crc,
    });
  }
  if (cursor !== directoryOffset) throw new UnreadableZip('bytes after its last member belong to no member');
  return members;
}

/** The end of central directory record's offset: the one record whose comment reaches exactly to the end. */
function endRecord(archive: Buffer): number {
  const found: number[] = [];
  const lowest = Math.max(0, archive.length - END_RECORD_BYTES - MAX_COMMENT_BYTES);
  for (let at = archive.length - END_RECORD_BYTES; at >= lowest; at--) {
    if (
      archive.readUInt32LE(at) === END_RECORD &&
      at + END_RECORD_BYTES + archive.readUInt16LE(at + 20) === archive.length
    )
      found.push(at);
  }
  if (found.length === 0) throw new UnreadableZip('it has no end of central directory record: damaged, or no zip');
  // A comment can hold a second record that ends the file as well: readers differ on which is real.
  if (found.length > 1) throw new UnreadableZip('it has more than one end of central directory record');
  return found[0]!;
}

function centralEntries(archive: Buffer, start: number, end: number, count: number): CentralEntry[] {
  const entries: CentralEntry[] = [];
  let at = start;
  for (let i = 0; i < count; i++) {
    if (at + CENTRAL_HEADER_BYTES > end || archive.readUInt32LE(at) !== CENTRAL_HEADER)
      throw new UnreadableZip('its central directory is damaged');
    const nameLength = archive.readUInt16LE(at + 28);
    const next = at + CENTRAL_HEADER_BYTES + nameLength + archive.readUInt16LE(at + 30) + archive.readUInt16LE(at + 32);
    if (next > end) throw new UnreadableZip('its central directory is damaged');
    const entry: CentralEntry = {
      flags: archive.readUInt16LE(at + 8),
      method: archive.readUInt16LE(at + 10),
      crc: archive.readUInt32LE(at + 16),
      compressedSize: archive.readUInt32LE(at + 20),
      declaredSize: archive.readUInt32LE(at + 24),
      localOffset: archive.readUInt32LE(at + 42),
      name: archive.subarray(at + CENTRAL_HEADER_BYTES, at + CENTRAL_HEADER_BYTES + nameLength),
    };
    if (archive.readUInt16LE(at + 34) !== 0) throw new UnreadableZip('it is split across several disks');
    if (entry.compressedSize === 0xffffffff || entry.declaredSize === 0xffffffff || entry.localOffset === 0xffffffff) {
      throw new UnreadableZip(ZIP64_REASON);
    }
    entries.push(entry);
    at = next;
  }
  if (at !== end) throw new UnreadableZip('its central directory holds more than its end record counts');
  return entries;
}

/** Where a member's data starts, after its local header, which must agree with the central directory. */
function localDataStart(archive: Buffer, entry: CentralEntry, shown: string, limit: number): number {
  const at = entry.localOffset;
  if (at + LOCAL_HEADER_BYTES > limit || archive.readUInt32LE(at) !== LOCAL_HEADER)
    throw new UnreadableZip(`its member "${shown}" has no local header where the central directory says`);
  const flags = archive.readUInt16LE(at + 6);
  const nameLength = archive.readUInt16LE(at + 26);
  const dataStart = at + LOCAL_HEADER_BYTES + nameLength + archive.readUInt16LE(at + 28);
  const sameName =
    at + LOCAL_HEADER_BYTES + nameLength <= limit &&
    archive.subarray(at + LOCAL_HEADER_BYTES, at + LOCAL_HEADER_BYTES + nameLength).equals(entry.name);
  // With a data descriptor the local header may carry zeros for the sizes and CRC (the writer
  // did not know them yet); without one they must be the central directory's.
  const sizesAgree =
    (flags & FLAG_DATA_DESCRIPTOR) !== 0 ||
    (archive.readUInt32LE(at + 14) === entry.crc &&
      archive.readUInt32LE(at + 18) === entry.compressedSize &&
      archive.readUInt32LE(at + 22) === entry.declaredSize);
  if (
    !sameName ||
    (flags & FLAGS_THAT_MATTER) !== (entry.flags & FLAGS_THAT_MATTER) ||
    archive.readUInt16LE(at + 8) !== entry.method ||
    !sizesAgree
  ) {
    throw new UnreadableZip(`its member "${shown}" has a local header that disagrees with its central directory entry`);
  }
  return dataStart;
}

/** The data descriptor after a member's data (12 bytes, or 16 with its optional signature), or 0. */
function descriptorLength(archive: Buffer, entry: CentralEntry, at: number, limit: number, shown: string): number {
  if ((entry.flags & FLAG_DATA_DESCRIPTOR) === 0) return 0;
  const matches = (from: number) =>
    from + 12 <= limit &&
    archive.readUInt32LE(from) === entry.crc &&
    archive.readUInt32LE(from + 4) === entry.compressedSize &&
    archive.readUInt32LE(from + 8) === entry.declaredSize;
  if (at + 4 <= limit && archive.readUInt32LE(at) === DATA_DESCRIPTOR && matches(at + 4)) return 16;
  if (matches(at)) return 12;
  throw new UnreadableZip(
    `its member "${shown}" has a data descriptor that disagrees with its central directory entry`,
  );
}

/** A name fit for a message: control characters shown as `?`, a long one cut (the archive's maker chose it). */
function nameOf(entry: CentralEntry): string {
  const name = entry.name
    .toString((entry.flags & FLAG_UTF8_NAME) !== 0 ? 'utf8' : 'latin1')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return name.length > MAX_SHOWN_NAME ? `${name.slice(0, MAX_SHOWN_NAME)}…` : name;
}
