// What is inside a compressed file attach_file would post, checked for secret values before it
// leaves. Compression hides every byte of a value from a check that reads the file's own bytes,
// so the formats this can open are opened: a zip archive (and so every .docx, .xlsx, .pptx, .odt,
// .ods, .jar, .epub) member by member, a gzip file, a zlib stream. Each member's inflated bytes go
// through the same check as a file's own bytes (the caller's: every form the masker knows), and
// a member that is itself compressed is opened the same way, a few layers down. The file is
// posted only when everything in it was read and found clean.
//
// What cannot be read is refused (or, with ATTACH_COMPRESSED=allow, posted unchecked and listed):
// the other formats (xz, zstd, bzip2, 7z, rar…), an encrypted member, a member stored with a
// method other than stored or deflate, a damaged or ambiguous zip (zip-members.ts), nesting past
// the depth below, and anything past the bounds below. The bounds stop a zip bomb (kilobytes that
// inflate to gigabytes) before it costs more than they allow; they are shared by every layer, so
// nesting archives does not multiply them. A member's size as its header states it is checked
// against them before inflating, and the inflater is held to it (a header that lies is caught by
// the count, one chunk past it at most).
import { crc32 } from 'node:zlib';
import { inflateBounded, type CompressedStream } from './bounded-inflate.js';
import { aFormat, compressedFormat } from './compressed-formats.js';
import { looksLikeText, SNIFF_BYTES } from './file-kind.js';
import { formatBytes } from './sizes.js';
import { TooManyMembers, UnreadableZip, zipMembers, type ZipMember } from './zip-members.js';
import { thousands } from '../text/thousands.js';

/** @internal */
export interface InflateLimits {
  /** Bytes read out of the file in all (inflated, or stored in a zip), over every member of every layer. */
  totalBytes: number;
  /** Members of zip archives in all, nested ones included. */
  members: number;
  /** A member or stream may inflate to this many times its compressed size… */
  ratio: number;
  /** …or to this many bytes, whichever is more: a small file of repeated lines inflates far past the ratio and is no bomb. */
  ratioFloorBytes: number;
  /** Compression layers read: the file's own, a compressed member in it, one in that. */
  depth: number;
}

/**
 * 64 MiB is several times the largest office document a team makes (a 20 MiB .xlsx of text
 * inflates to about 150 MiB only when its cells are near-identical); 100:1 is past what real
 * documents reach (spreadsheet XML deflates about 10:1, text 3 to 10:1) and far below what a
 * bomb does (zeros deflate about 1000:1).
 * @internal
 */
export const INFLATE_LIMITS: InflateLimits = {
  totalBytes: 64 * 1024 * 1024,
  members: 10_000,
  ratio: 100,
  ratioFloorBytes: 4 * 1024 * 1024,
  depth: 3,
};

/**
 * What the check has read so far: one per file, shared by every layer of it.
 * @internal
 */
export class InflateBudget {
  /** Bytes inflated (or read stored), counted chunk by chunk as the inflater hands them over. */
  read = 0;
  members = 0;
  constructor(readonly limits: InflateLimits = INFLATE_LIMITS) {}
}

export interface ContentsCheck {
  /** The same check a file's own bytes get: true when these bytes hold a configured secret value in any form. */
  holdsSecret: (bytes: Buffer) => Promise<boolean> | boolean;
  /** ATTACH_COMPRESSED=allow: what cannot be read is posted unchecked (and listed) instead of refusing the file. */
  allowUnreadable: boolean;
  /** Pass one to see what was read (tests); otherwise a fresh one with the default bounds. */
  budget?: InflateBudget;
  signal?: AbortSignal;
}

/** The formats this check opens, by compressed-formats.ts's name for them. */
const READABLE: ReadonlyMap<string, 'zip' | CompressedStream> = new Map([
  ['zip archive', 'zip'],
  ['gzip file', 'gzip'],
  ['zlib stream', 'zlib'],
]);

/** Whether the check opens a file of this format (compressedFormat's name), or must refuse it unread. */
export function readableFormat(format: string): boolean {
  return READABLE.has(format);
}

/** The zip compression methods worth naming when one is refused. */
const METHOD_NAMES: ReadonlyMap<number, string> = new Map([
  [1, 'shrink'],
  [6, 'implode'],
  [9, 'deflate64'],
  [12, 'bzip2'],
  [14, 'LZMA'],
  [93, 'zstd'],
  [95, 'xz'],
  [98, 'PPMd'],
  [99, 'AES encryption'],
]);

const ALLOW = 'an admin may allow such files with ATTACH_COMPRESSED=allow';

/**
 * Reads the contents of `bytes` (a compressed file of `format`, as compressedFormat names it)
 * and checks them. Throws the refusal (an Error whose message is said to the model) when they
 * hold a secret value, or when something cannot be read and that is not allowed; otherwise
 * returns what could not be read and so went unchecked (empty unless allowed).
 */
export async function checkCompressedContents(
  bytes: Buffer,
  format: string,
  shown: string,
  check: ContentsCheck,
): Promise<string[]> {
  const reader = new ContentsReader(shown, check, check.budget ?? new InflateBudget());
  try {
    await reader.layer(bytes, format, [], 1);
  } catch (error) {
    // The file's own format unread, or a spent bound that ends the reading: with
    // ATTACH_COMPRESSED=allow the rest goes unchecked.
    if (!(error instanceof Unreadable) || !check.allowUnreadable) throw error;
    reader.unchecked.push(`${error.subject}: ${error.what}`);
  }
  return reader.unchecked;
}

/** Something in the file that cannot be read: `what` says why, after `subject` (the file or a member path). */
class Unreadable extends Error {
  constructor(
    readonly subject: string,
    readonly what: string,
    message = `refused: ${subject} ${what}: it cannot be checked for secret values; ${ALLOW}. Attach the files uncompressed, or as a plain zip or gzip, instead`,
  ) {
    super(message);
  }
}

/** Past one of the bounds (INFLATE_LIMITS), named in `what`: a zip bomb, or more than the check reads. */
class PastBound extends Unreadable {
  constructor(subject: string, what: string) {
    super(
      subject,
      what,
      `refused: ${subject} ${what}: a zip bomb, or too large to check for secret values; ${ALLOW}. Attach smaller files, or fewer at a time, instead`,
    );
  }
}

/** Past a bound shared by the whole file: nothing more of it is read. */
class BoundReached extends PastBound {}

class ContentsReader {
  readonly unchecked: string[] = [];
  private readonly limits: InflateLimits;

  constructor(
    private readonly shown: string,
    private readonly check: ContentsCheck,
    private readonly budget: InflateBudget,
  ) {
    this.limits = budget.limits;
  }

  /** One compression layer: `bytes` are a `format` found at `place` (member names from the file down). */
  async layer(bytes: Buffer, format: string, place: readonly string[], depth: number): Promise<void> {
    const kind = READABLE.get(format);
    if (!kind) throw new Unreadable(this.subject(place), `is ${aFormat(format)}`);
    if (depth > this.limits.depth)
      throw new Unreadable(
        this.subject(place),
        `is ${aFormat(format)} inside ${depth - 1} other compressed layers, more than the ${this.limits.depth} the check opens`,
      );
    if (kind === 'zip') return this.zip(bytes, place, depth);
    const inflated = await this.stream(kind, bytes, place);
    await this.contents(inflated, place, depth);
  }

  /** Bytes read out of a layer: checked as they are, then opened if they are compressed in turn. */
  private async contents(bytes: Buffer, place: readonly string[], depth: number): Promise<void> {
    if (await this.check.holdsSecret(bytes)) {
      throw new Error(
        `refused: ${this.subject(place)}, inflated, holds a configured secret value, which cannot be masked inside a compressed file`,
      );
    }
    // Judged by its bytes, as a file's are: a text (an XML part, a CSV) is not read as a
    // compressed stream, though one starting `x^` looks like a zlib header.
    const inner = looksLikeText(bytes.subarray(0, SNIFF_BYTES)) ? undefined : compressedFormat(bytes);
    if (inner) await this.layer(bytes, inner, place, depth + 1);
  }

  private async zip(archive: Buffer, place: readonly string[], depth: number): Promise<void> {
    let members: ZipMember[];
    try {
      members = zipMembers(archive, this.limits.members - this.budget.members);
    } catch (error) {
      if (!(error instanceof UnreadableZip)) throw error;
      if (error instanceof TooManyMembers)
        throw new BoundReached(
          this.subject(place),
          `has more members than the ${thousands(this.limits.members)} in all the check reads`,
        );
      throw new Unreadable(this.subject(place), `is a zip archive the check cannot read (${error.message})`);
    }
    this.budget.members += members.length;
    for (const member of members) {
      const at = [...place, member.name];
      try {
        await this.member(member, at, depth);
      } catch (error) {
        if (!(error instanceof Unreadable) || error instanceof BoundReached || !this.check.allowUnreadable) throw error;
        this.unchecked.push(`${error.subject}: ${error.what}`);
      }
    }
  }

  private async member(member: ZipMember, place: readonly string[], depth: number): Promise<void> {
    const subject = this.subject(place);
    if (member.encrypted) throw new Unreadable(subject, 'is encrypted');
    if (member.method !== 0 && member.method !== 8) {
      const name = METHOD_NAMES.get(member.method);
      throw new Unreadable(
        subject,
        `is compressed with method ${member.method}${name ? ` (${name})` : ''}, which the check does not read`,
      );
    }
    // The size its header states, held against the bounds before anything is inflated.
    this.withinBounds(member.declaredSize, member.data.length, subject, 'says it inflates to');
    let bytes: Buffer;
    if (member.method === 0) {
      if (member.data.length !== member.declaredSize)
        throw new Unreadable(subject, 'is stored with a size that disagrees with its header');
      this.budget.read += member.data.length;
      bytes = member.data;
    } else {
      const inflated = await this.inflate('deflate', member.data, member.declaredSize, subject);
      if (!inflated.complete)
        throw new Unreadable(
          subject,
          `inflates past the ${formatBytes(member.declaredSize)} its header says (a zip bomb, or damaged)`,
        );
      if (inflated.bytes.length !== member.declaredSize)
        throw new Unreadable(
          subject,
          `inflates to ${formatBytes(inflated.bytes.length)}, not the ${formatBytes(member.declaredSize)} its header says`,
        );
      if (inflated.consumed !== member.data.length)
        throw new Unreadable(subject, 'has bytes after the end of its compressed data');
      bytes = inflated.bytes;
    }
    // What an unzip tool checks before it hands the member over: one that fails is damaged, and tools differ on what they do with it.
    if (crc32(bytes) !== member.crc)
      throw new Unreadable(subject, 'is damaged (its checksum does not match its bytes)');
    await this.contents(bytes, place, depth);
  }

  /** A gzip or zlib stream, whose size is known only by inflating it: the bounds are the cap. */
  private async stream(kind: CompressedStream, input: Buffer, place: readonly string[]): Promise<Buffer> {
    const subject = this.subject(place);
    const remaining = this.limits.totalBytes - this.budget.read;
    const ratioCap = this.ratioCap(input.length);
    const inflated = await this.inflate(kind, input, Math.min(remaining, ratioCap), subject);
    if (inflated.complete) return inflated.bytes;
    if (ratioCap < remaining) throw new PastBound(subject, this.ratioBound(input.length, 'inflates to'));
    throw new BoundReached(subject, this.totalBound('inflates to'));
  }

  private async inflate(kind: CompressedStream, input: Buffer, cap: number, subject: string) {
    try {
      return await inflateBounded(kind, input, cap, {
        signal: this.check.signal,
        onChunk: (bytes) => (this.budget.read += bytes),
      });
    } catch (error) {
      if (this.check.signal?.aborted) throw error;
      throw new Unreadable(subject, `is not valid ${kind} data (${(error as Error).message})`);
    }
  }

  /** Refuses a member whose stated size passes a bound, naming the bound. */
  private withinBounds(size: number, compressed: number, subject: string, verb: string): void {
    if (size > this.limits.totalBytes - this.budget.read) throw new BoundReached(subject, this.totalBound(verb));
    if (size > this.ratioCap(compressed)) throw new PastBound(subject, this.ratioBound(compressed, verb));
  }

  private ratioCap(compressed: number): number {
    return Math.max(this.limits.ratioFloorBytes, compressed * this.limits.ratio);
  }

  private ratioBound(compressed: number, verb: string): string {
    return `${verb} more than ${this.limits.ratio} times its compressed ${formatBytes(compressed)} (and past ${formatBytes(this.limits.ratioFloorBytes)}), the most the check inflates`;
  }

  private totalBound(verb: string): string {
    return `${verb} more than the ${formatBytes(this.limits.totalBytes)} in all the check reads out of one file (with what came before it)`;
  }

  /** The file, or a member in it: `report.xlsx › "xl/sharedStrings.xml"`. */
  private subject(place: readonly string[]): string {
    return [this.shown, ...place.map((name) => `"${name}"`)].join(' › ');
  }
}
