// What a shell command printed, made fit for the model to read.
//
// One idea: the model reads text, and reads it as JSON (run_shell's answer is an object),
// where a NUL byte costs six characters (`\u0000`): 50 MB of zeros once came back as
// 119,607 characters under a 20,000-character cap. So bytes that are not text are counted
// and summarised in one line, never dumped; and the text is cleaned for a reader that is
// not a terminal: colour and cursor escapes are dropped, a carriage return ends a line, and
// any other control character is shown as its visible Control Picture (BEL as ␇), one
// character that JSON leaves alone.
//
// What counts as binary: each pipe's bytes are read in windows of 512, aligned to the stream
// (not to how the pipe delivered them, so the answer does not depend on timing). A window is
// binary if it holds a NUL byte, or if more than a quarter of its bytes, and at least 8, are
// not text: control bytes other than tab, line feed, carriage return, form feed, backspace
// and escape; DEL; bytes that are not valid UTF-8. Adjacent binary windows are one run, shown
// as `[… N bytes of binary output not shown …]`. The text around a run is kept, before its first
// non-text byte (a header printed before the dump) and after its last one (a closing message),
// if it holds a line break or is at least 16 bytes long, or, before, continues text already
// shown: so two stray letters of noise at either end of a dump are not shown as text.
import { StringDecoder } from 'node:string_decoder';
import { formatCount, MiddleTrimmedText } from './output.js';

const WINDOW_BYTES = 512;
const MIN_NON_TEXT_BYTES = 8;
const MIN_KEPT_EDGE_BYTES = 16;

/** 1 for an ASCII byte that is not text. Tab, LF, CR, FF, BS and ESC are text (cleaned below). */
const NON_TEXT_ASCII = new Uint8Array(128);
for (let byte = 0; byte < 0x20; byte++) NON_TEXT_ASCII[byte] = 1;
for (const byte of [0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1b]) NON_TEXT_ASCII[byte] = 0;
NON_TEXT_ASCII[0x7f] = 1;

export interface CollectedOutput {
  /** The cleaned text, binary runs summarised, middle-trimmed to the budget. */
  text: string;
  /** How many bytes were left out as binary (0 when everything was text). */
  binaryBytes: number;
}

/** Where the pipes' text and binary runs go, in order: one budget for all of them. */
interface OutputSink {
  text(text: string): void;
  binaryRun(bytes: number): void;
}

/** A command's output (all its pipes), collected in bounded memory. */
export class CommandOutput {
  private readonly collected: MiddleTrimmedText;
  private readonly pipes: PipeReader[] = [];
  private binaryBytes = 0;
  private atLineStart = true;
  /** A run's marker was the last thing added: text after it starts on a line of its own. */
  private afterMarker = false;
  private readonly sink: OutputSink = {
    text: (text) => {
      if (text.length === 0) return;
      this.add(this.afterMarker && !text.startsWith('\n') ? `\n${text}` : text);
      this.afterMarker = false;
    },
    binaryRun: (bytes) => {
      this.binaryBytes += bytes;
      this.add(`${this.atLineStart ? '' : '\n'}[… ${formatCount(bytes)} bytes of binary output not shown …]`);
      this.afterMarker = true;
    },
  };

  constructor(maxChars: number) {
    this.collected = new MiddleTrimmedText(maxChars);
  }

  /** A reader for one pipe (stdout, stderr): each has its own decoder, window and escape state. */
  pipe(): PipeReader {
    const reader = new PipeReader(this.sink);
    this.pipes.push(reader);
    return reader;
  }

  /** A line of the bot's own ("could not start the command"), added as it is. */
  note(text: string): void {
    this.sink.text(text);
  }

  private add(text: string): void {
    this.collected.append(text);
    this.atLineStart = text.endsWith('\n');
  }

  /** Everything so far, bytes still held in a pipe's window included. */
  finish(): CollectedOutput {
    for (const pipe of this.pipes) pipe.end();
    return { text: this.collected.toString(), binaryBytes: this.binaryBytes };
  }
}

/** One pipe's bytes: classified window by window, text decoded and cleaned, binary counted. */
export class PipeReader {
  private carry: Buffer | null = null;
  private readonly decoder = new StringDecoder('utf8');
  private readonly terminal = new TerminalText();
  /** The current binary run, if one is open: its bytes so far, and the text after its last non-text byte. */
  private run: { bytes: number; tail: Buffer } | null = null;
  /** The last window was text: the start of a run continues it. */
  private inText = false;
  private ended = false;

  constructor(private readonly sink: OutputSink) {}

  write(chunk: Buffer): void {
    if (this.ended || chunk.length === 0) return;
    const data = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = null;
    let offset = 0;
    for (; offset + WINDOW_BYTES <= data.length; offset += WINDOW_BYTES)
      this.window(data.subarray(offset, offset + WINDOW_BYTES));
    // Copied: a kept subarray would hold the whole chunk in memory.
    if (offset < data.length) this.carry = Buffer.from(data.subarray(offset));
  }

  /** The pipe closed (or the command is over): classify what is held, flush the decoder. */
  end(): void {
    if (this.ended) return;
    if (this.carry) this.window(this.carry);
    this.carry = null;
    this.closeRun();
    this.flushText();
    this.ended = true;
  }

  private window(window: Buffer): void {
    const nul = window.indexOf(0);
    // Inside a dump, a window with a NUL needs no further reading: it stays binary.
    if (this.run && nul !== -1) return this.extendRun(window);
    const { nonText, first } = scanWindow(window);
    const binary = nul !== -1 || (nonText * 4 > window.length && nonText >= MIN_NON_TEXT_BYTES);
    if (!binary) {
      this.closeRun();
      this.text(window);
      this.inText = true;
      return;
    }
    if (this.run) return this.extendRun(window);
    const head = window.subarray(0, first);
    const keepHead = this.inText || worthKeeping(head);
    if (keepHead) this.text(head);
    this.flushText();
    this.inText = false;
    const start = keepHead ? first : 0;
    const tailStart = Math.max(first, textTailStart(window));
    this.run = { bytes: tailStart - start, tail: window.subarray(tailStart) };
  }

  private extendRun(window: Buffer): void {
    const run = this.run!;
    const tailStart = textTailStart(window);
    run.bytes += run.tail.length + tailStart;
    run.tail = window.subarray(tailStart);
  }

  private closeRun(): void {
    const run = this.run;
    if (!run) return;
    this.run = null;
    const keepTail = worthKeeping(run.tail);
    this.sink.binaryRun(run.bytes + (keepTail ? 0 : run.tail.length));
    if (keepTail) this.text(run.tail);
  }

  private text(bytes: Buffer): void {
    if (bytes.length > 0) this.sink.text(this.terminal.write(this.decoder.write(bytes)));
  }

  /** Ends the text before a binary run: a character or an escape it cut is not continued after it. */
  private flushText(): void {
    this.sink.text(this.terminal.write(this.decoder.end()) + this.terminal.flush());
  }
}

/** Text at the edge of a binary run is shown if it is more than a few stray bytes. */
function worthKeeping(text: Buffer): boolean {
  return text.length >= MIN_KEPT_EDGE_BYTES || text.includes(0x0a) || text.includes(0x0d);
}

/** How many bytes of a window are not text, and where the first one is (-1: none). */
function scanWindow(window: Buffer): { nonText: number; first: number } {
  let nonText = 0;
  let first = -1;
  let pending = 0; // continuation bytes the current UTF-8 character still needs
  let lead = 0;
  // A window may start inside a character the previous one began.
  let index = 0;
  while (index < 3 && index < window.length && (window[index]! & 0xc0) === 0x80) index++;
  for (; index < window.length; index++) {
    const byte = window[index]!;
    if (pending > 0) {
      if ((byte & 0xc0) === 0x80) {
        pending--;
        continue;
      }
      nonText++; // a character broken off before its end
      if (first < 0) first = lead;
      pending = 0;
    }
    if (byte < 0x80) {
      if (NON_TEXT_ASCII[byte]) {
        nonText++;
        if (first < 0) first = index;
      }
      continue;
    }
    pending = utf8Length(byte) - 1;
    if (pending < 0) {
      pending = 0;
      nonText++;
      if (first < 0) first = index;
    } else {
      lead = index;
    }
  }
  // A character cut by the window's end continues in the next window: not counted.
  return { nonText, first };
}

/** Where the text at the end of a window starts: after its last non-text byte. */
function textTailStart(window: Buffer): number {
  let start = window.length;
  while (start > 0) {
    const byte = window[start - 1]!;
    if (byte < 0x80) {
      if (NON_TEXT_ASCII[byte]) break;
      start--;
      continue;
    }
    let lead = start - 1;
    while (lead >= 0 && start - lead <= 3 && (window[lead]! & 0xc0) === 0x80) lead--;
    if (lead < 0 || utf8Length(window[lead]!) !== start - lead) break;
    start = lead;
  }
  return start;
}

/** The length of the UTF-8 character a lead byte starts; 0 for a byte that cannot start one. */
function utf8Length(byte: number): number {
  if (byte < 0x80) return 1;
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 0;
}

const ESC = 0x1b;
const BEL = 0x07;
const LF = 0x0a;
const CR = 0x0d;
const TAB = 0x09;
/** A string sequence (OSC, DCS…) longer than this, or broken by a line, is not one: stop dropping. */
const MAX_ESCAPE_CHARS = 4_096;

type EscapeState = 'ground' | 'escape' | 'intermediate' | 'csi' | 'string' | 'string-escape';

/**
 * Text as a terminal would show it, minus the terminal: ECMA-48 escape sequences (CSI
 * `ESC [ … m` colours and cursor moves, OSC titles and links, charset switches) are dropped;
 * CR LF and a lone CR become LF (a progress bar's redraws become lines); every other control
 * character but tab and LF becomes its Control Picture (U+2400 + code, DEL as ␡). One pass,
 * one state per character: linear in the output, however it is split into chunks.
 * @internal
 */
export class TerminalText {
  private state: EscapeState = 'ground';
  private pendingCr = false;
  private escapeLength = 0;

  write(text: string): string {
    const parts: string[] = [];
    let plainStart = 0;
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (this.state !== 'ground') {
        if (this.escape(code, parts)) {
          plainStart = index + 1;
        } else {
          // The sequence was broken off (its state is back to ground): read this character again as text.
          plainStart = index;
          index--;
        }
        continue;
      }
      if (this.pendingCr) {
        this.pendingCr = false;
        parts.push('\n');
        if (code === LF) {
          plainStart = index + 1; // CR LF is one line break
          continue;
        }
      }
      if ((code >= 0x20 && code !== 0x7f) || code === LF || code === TAB) continue;
      parts.push(text.slice(plainStart, index));
      plainStart = index + 1;
      if (code === CR) this.pendingCr = true;
      else if (code === ESC) this.enter('escape');
      else parts.push(controlPicture(code));
    }
    if (this.state === 'ground') parts.push(text.slice(plainStart));
    return parts.join('');
  }

  /** The end of the text: a CR still pending is a line break, a lone ESC is shown. */
  flush(): string {
    const rest = this.pendingCr ? '\n' : this.state === 'escape' ? controlPicture(ESC) : '';
    this.pendingCr = false;
    this.state = 'ground';
    return rest;
  }

  private enter(state: EscapeState): void {
    this.state = state;
    this.escapeLength = 0;
  }

  /** One character inside an escape sequence. False: it does not belong to the sequence. */
  private escape(code: number, parts: string[]): boolean {
    this.escapeLength++;
    switch (this.state) {
      case 'escape':
        if (code === 0x5b)
          this.enter('csi'); // [
        else if (code === 0x5d || code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f)
          this.enter('string'); // ] P X ^ _
        else if (code >= 0x20 && code <= 0x2f) this.enter('intermediate');
        else if (code >= 0x30 && code <= 0x7e) this.state = 'ground';
        else {
          // Not a sequence: the ESC is shown, what follows is text.
          parts.push(controlPicture(ESC));
          this.state = 'ground';
          return false;
        }
        return true;
      case 'intermediate':
        if (code >= 0x20 && code <= 0x2f && this.escapeLength <= MAX_ESCAPE_CHARS) return true;
        this.state = 'ground';
        return code >= 0x30 && code <= 0x7e;
      case 'csi':
        if (code >= 0x20 && code <= 0x3f && this.escapeLength <= MAX_ESCAPE_CHARS) return true;
        this.state = 'ground';
        return code >= 0x40 && code <= 0x7e;
      case 'string':
        if (code === BEL) this.state = 'ground';
        else if (code === ESC) this.state = 'string-escape';
        else if (code === LF || code === CR || this.escapeLength > MAX_ESCAPE_CHARS) {
          this.state = 'ground';
          return false;
        }
        return true;
      case 'string-escape':
        // ESC \ ends the string; an ESC followed by anything else starts a new sequence.
        if (code === 0x5c) {
          this.state = 'ground';
          return true;
        }
        this.enter('escape');
        return this.escape(code, parts);
      case 'ground':
        return false;
      default: {
        const unknown: never = this.state;
        throw new Error(`unknown escape state ${String(unknown)}`);
      }
    }
  }
}

function controlPicture(code: number): string {
  return code === 0x7f ? '\u2421' : String.fromCharCode(0x2400 + code);
}
