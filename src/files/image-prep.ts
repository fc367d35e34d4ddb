// An image shared in a thread, made fit for the providers' image inputs: one that is already
// within every limit goes as it is; one that is too large (bytes or pixels) or animated gets a
// downscaled, re-encoded copy beside it; anything else is `unreadable`, with a reason a person
// can read. The type comes from the file's first bytes, never from its name.
//
// One idea: a bad image must be caught here, not by the provider. An image part the API
// refuses fails the whole request, and since the conversation keeps the part, every later
// request too; so even an image that looks within limits is decoded in full once (a truncated
// PNG's header reads fine) before it is passed as it is.
import { constants } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import type { Sharp } from 'sharp';
import { FairQueue } from './fair-queue.js';
import { sniffImageType } from './file-kind.js';

// The same judgement intake.ts makes of a download's first bytes, exported here too for callers of this module.
/** @internal */
export { sniffImageType };

type SharpModule = typeof import('sharp');

let sharpModule: Promise<SharpModule> | undefined;

/**
 * sharp, loaded at the first image: importing it maps libvips into the process, 19 MB of
 * RSS (measured on Node 20) that a bot nobody sends an image to should not hold for its life.
 */
async function loadSharp(): Promise<SharpModule['default']> {
  sharpModule ??= import('sharp');
  return (await sharpModule).default;
}

type ImageMimeType = NonNullable<ReturnType<typeof sniffImageType>>;

export interface ImageLimits {
  /** Largest file sent, in raw bytes (before base64). */
  maxBytes: number;
  /** Longest edge sent, in pixels. */
  maxLongEdge: number;
  /** Largest width or height sent, in pixels. */
  maxSide: number;
  /** Largest image decoded at all, in pixels (width × height; MAX_IMAGE_PIXELS): past it, refused from its header. */
  maxInputPixels: number;
}

/**
 * The vendors' figures (Anthropic's "Vision" guide and API errors; OpenAI's "Images and
 * vision" guide), the stricter of each pair:
 * - Anthropic refuses an image over 5 MB (5,242,880 bytes), measured on its base64 text;
 *   base64 is 4/3 of the raw bytes, so 3.75 MiB raw (3,932,160 bytes) is the most that fits.
 *   OpenAI allows more (up to 50 MB per request).
 * - Anthropic recommends a long edge of at most 1568 px: larger images are scaled down on its
 *   side anyway, costing time and tokens for nothing; it also caps requests of more than 20
 *   images at 2000 px per side, which 1568 keeps within. OpenAI scales to fit 2048 × 2048.
 * - Anthropic refuses an image over 8000 px on either side.
 * - OpenAI takes GIF only when it is not animated, so an animated image goes as its first frame.
 * maxInputPixels is ours (MAX_IMAGE_PIXELS): 40 MP covers the largest phone and most camera
 * photos (a 48 MP phone sensor saves 12 MP by default; 8000 × 5000 is 40) and a 4K screenshot
 * ten times over. Decoding costs what the pixels do, not what the file does: a flat 100 MP PNG
 * of 400 KB took 11.5 s of CPU and 425 MB to prepare, holding every thread's images behind it,
 * and an 800-byte file can declare 30000 × 30000 pixels (2.7 GB decoded). Past the limit the
 * image is refused from its header, before a pixel is decoded.
 */
export const IMAGE_LIMITS: Readonly<ImageLimits> = {
  maxBytes: 3_932_160,
  maxLongEdge: 1568,
  maxSide: 8000,
  maxInputPixels: 40_000_000,
};

/** JPEG quality of a copy; lowered step by step only when a copy is still over maxBytes. */
const JPEG_QUALITY = 85;

export type PreparedImage =
  | { kind: 'as-is'; mimeType: ImageMimeType; width: number; height: number }
  | { kind: 'copy'; path: string; mimeType: 'image/png' | 'image/jpeg'; width: number; height: number }
  | { kind: 'unreadable'; reason: string };

async function readHead(path: string): Promise<{ head: Uint8Array; size: number } | 'not a plain file'> {
  // Non-blocking: a FIFO planted at the name would otherwise wait for a writer, holding every
  // image behind it in the queue.
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await file.stat();
    if (!stats.isFile()) return 'not a plain file';
    const { size } = stats;
    const head = new Uint8Array(12);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return { head: head.subarray(0, bytesRead), size };
  } finally {
    await file.close();
  }
}

function formatMegapixels(pixels: number): string {
  return `${Number((pixels / 1_000_000).toFixed(1))} megapixels`;
}

/** The refusal of an image past maxInputPixels, naming its size, the limit and the setting. */
function tooManyPixels(what: string, bounds: ImageLimits, size?: { width: number; height: number }): PreparedImage {
  const declared = size
    ? `is ${size.width} × ${size.height} pixels (${formatMegapixels(size.width * size.height)})`
    : 'declares more pixels than that';
  return {
    kind: 'unreadable',
    reason: `the ${what} image ${declared}, more than the ${formatMegapixels(bounds.maxInputPixels)} an image may have (MAX_IMAGE_PIXELS)`,
  };
}

/** libvips' and the file system's messages, in words for the person and the model. */
function unreadable(error: unknown, type: ImageMimeType, bounds: ImageLimits): PreparedImage {
  const message = error instanceof Error ? error.message : String(error);
  const what = formatName(type);
  if (/pixel limit/i.test(message)) return tooManyPixels(what, bounds);
  return { kind: 'unreadable', reason: `the file starts like a ${what} image but cannot be decoded (${message})` };
}

function formatName(type: ImageMimeType): string {
  return type.slice('image/'.length).toUpperCase();
}

// One image at a time, process-wide: decoding holds the whole image (a 4000 × 3000 PNG is
// 36 MB of pixels, more inside libvips), and ten screenshots dropped at once, prepared
// together, took the bot's RSS up 203 MB where one at a time stays near one image's worth.
// The work is CPU-bound, so on two cores running them together saves little time anyway.
// People take turns (fair-queue.ts): one person's fifty screenshots wait behind their own.
const queue = new FairQueue();

export interface ImageRequest {
  /** Who shared it (platform, workspace and user): images are prepared in turns between people. */
  requester?: string;
  /** A stopped turn takes its image out of the line while it waits (it is then `unreadable`). */
  signal?: AbortSignal;
}

/**
 * Makes the image at `inputPath` fit the limits. A copy, when one is needed, is written to
 * `outputPathWithoutExt` plus `.jpg` or `.png`. Never throws for a bad image or a missing file.
 */
export async function prepareImageForModel(
  inputPath: string,
  outputPathWithoutExt: string,
  limits: Partial<ImageLimits> = {},
  request: ImageRequest = {},
): Promise<PreparedImage> {
  try {
    return await queue.run(
      request.requester ?? '',
      () => prepare(inputPath, outputPathWithoutExt, limits),
      request.signal,
    );
  } catch (error) {
    // prepare never throws; only a wait cut short by a stopped turn lands here.
    if (request.signal?.aborted)
      return { kind: 'unreadable', reason: 'the image was not prepared: the turn was stopped' };
    return {
      kind: 'unreadable',
      reason: `the image could not be prepared (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

async function prepare(
  inputPath: string,
  outputPathWithoutExt: string,
  limits: Partial<ImageLimits>,
): Promise<PreparedImage> {
  const bounds: ImageLimits = { ...IMAGE_LIMITS, ...limits };
  let head: Uint8Array;
  let size: number;
  try {
    const read = await readHead(inputPath);
    if (read === 'not a plain file') return { kind: 'unreadable', reason: 'the file is not a plain file' };
    ({ head, size } = read);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      kind: 'unreadable',
      reason: code === 'ENOENT' ? 'the file is not there' : `the file could not be opened (${code ?? String(error)})`,
    };
  }
  const type = sniffImageType(head);
  if (!type)
    return {
      kind: 'unreadable',
      reason: size === 0 ? 'the file is empty' : 'the file is not a PNG, JPEG, GIF or WebP image',
    };
  let sharp: SharpModule['default'];
  try {
    sharp = await loadSharp();
  } catch (error) {
    // sharp's binary for this platform is missing (an install with --no-optional, say).
    return {
      kind: 'unreadable',
      reason: `images cannot be prepared on this machine (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    };
  }

  // failOn 'error': a truncated or corrupt image is refused; a mere warning (a bad CRC in an
  // ancillary chunk, common in screenshots from some tools) is not. Only the first frame of
  // an animation is read (sharp's default).
  const load = (): Sharp => sharp(inputPath, { limitInputPixels: bounds.maxInputPixels, failOn: 'error' });
  let width: number;
  let height: number;
  let animated: boolean;
  let opaque: boolean;
  try {
    // The header alone, without the pixel limit, so a refusal can say how large the image is.
    const metadata = await sharp(inputPath, { limitInputPixels: false }).metadata();
    width = metadata.width;
    height = metadata.height;
    if (width * height > bounds.maxInputPixels) return tooManyPixels(formatName(type), bounds, { width, height });
    animated = (metadata.pages ?? 1) > 1;
    // stats() decodes every pixel: the full check the header alone cannot give.
    opaque = (await load().stats()).isOpaque;
  } catch (error) {
    return unreadable(error, type, bounds);
  }

  const longEdge = Math.max(width, height);
  if (
    size <= bounds.maxBytes &&
    longEdge <= bounds.maxLongEdge &&
    width <= bounds.maxSide &&
    height <= bounds.maxSide &&
    !animated
  ) {
    return { kind: 'as-is', mimeType: type, width, height };
  }
  try {
    return await writeCopy(sharp, load, outputPathWithoutExt, bounds, opaque);
  } catch (error) {
    return unreadable(error, type, bounds);
  }
}

/** One try at the copy: a scale of the fitted size, and the JPEG quality (a PNG is lossless). */
interface Attempt {
  scale: number;
  jpegQuality: number;
}

// Tried in order until the copy is under maxBytes. The first fits nearly every photo and
// screenshot; the later ones are for noise-like images (film grain, dithering), which barely
// compress: 1568 × 1045 px of RGBA noise is 7.2 MB as PNG, 1.2 MB as JPEG at 85. The list is
// finite, so the work is bounded: past the last, the image is refused. No 256-colour palette
// for PNG: libimagequant took 25 s on that noise at its default effort (2 s at the lowest),
// where scaling down takes a quarter of a second.
const ATTEMPTS: readonly Attempt[] = [
  { scale: 1, jpegQuality: JPEG_QUALITY },
  { scale: 1, jpegQuality: 75 },
  { scale: 0.75, jpegQuality: 70 },
  { scale: 0.5, jpegQuality: 65 },
  { scale: 0.35, jpegQuality: 60 },
];

async function writeCopy(
  sharp: SharpModule['default'],
  load: () => Sharp,
  outputPathWithoutExt: string,
  bounds: ImageLimits,
  opaque: boolean,
): Promise<PreparedImage> {
  const edge = Math.min(bounds.maxLongEdge, bounds.maxSide);
  // Decoded and fitted once (upright per its EXIF orientation); each attempt re-encodes this.
  const fitted = await load()
    .rotate()
    .resize({ width: edge, height: edge, fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height, channels } = fitted.info;
  // PNG only when transparency is really used: a screenshot saved as RGBA with every pixel
  // opaque is a quarter the size as JPEG, and looks the same.
  const png = !opaque;
  const mimeType = png ? 'image/png' : 'image/jpeg';
  const path = `${outputPathWithoutExt}${png ? '.png' : '.jpg'}`;
  // A PNG's bytes depend on its pixels only, so its quality steps are skipped.
  const attempts = png
    ? ATTEMPTS.filter((attempt, i) => i === 0 || attempt.scale < (ATTEMPTS[i - 1]?.scale ?? 1))
    : ATTEMPTS;
  for (const attempt of attempts) {
    const w = Math.max(1, Math.round(width * attempt.scale));
    const h = Math.max(1, Math.round(height * attempt.scale));
    let pipeline = sharp(fitted.data, { raw: { width, height, channels } });
    if (attempt.scale < 1) pipeline = pipeline.resize(w, h);
    const encoded = png
      ? await pipeline.png().toBuffer()
      : await pipeline.removeAlpha().jpeg({ quality: attempt.jpegQuality }).toBuffer();
    if (encoded.length <= bounds.maxBytes) {
      try {
        await writeFile(path, encoded);
      } catch (error) {
        // Not the image's fault (a full disk, a folder gone): say so, not "cannot be decoded".
        return {
          kind: 'unreadable',
          reason: `the image's fitted copy could not be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
        };
      }
      return { kind: 'copy', path, mimeType, width: w, height: h };
    }
  }
  const smallest = Math.round(Math.max(width, height) * (ATTEMPTS.at(-1)?.scale ?? 1));
  return {
    kind: 'unreadable',
    reason: `the image could not be brought under ${(bounds.maxBytes / 1024 / 1024).toFixed(2)} MiB, even at ${smallest} px on its long edge`,
  };
}
