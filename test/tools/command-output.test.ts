import { describe, expect, it } from 'vitest';
import { CommandOutput, TerminalText } from '../../src/tools/command-output.js';
import { cpuMsOf } from '../support/cpu-time.js';

/** Feed `bytes` through one pipe in chunks of `chunkSize`, as a pipe might deliver them. */
function collect(bytes: Buffer, chunkSize = 65_536, maxChars = 20_000): { text: string; binaryBytes: number } {
  const output = new CommandOutput(maxChars);
  const pipe = output.pipe();
  for (let offset = 0; offset < bytes.length; offset += chunkSize)
    pipe.write(bytes.subarray(offset, offset + chunkSize));
  return output.finish();
}

const text = (value: string): Buffer => Buffer.from(value, 'utf8');

describe('a command that prints binary data', () => {
  it('a dump of zeros becomes one line saying how many bytes were left out', () => {
    expect(collect(Buffer.alloc(5_000_000))).toEqual({
      text: '[… 5,000,000 bytes of binary output not shown …]',
      binaryBytes: 5_000_000,
    });
  });

  it('keeps the header printed before the dump and the message printed after it', () => {
    const bytes = Buffer.concat([text('compressing archive…\n'), Buffer.alloc(100_000), text('done: 3 files\n')]);
    expect(collect(bytes)).toEqual({
      text: 'compressing archive…\n[… 100,000 bytes of binary output not shown …]\ndone: 3 files\n',
      binaryBytes: 100_000,
    });
  });

  it('gives the same answer however the pipe splits the bytes', () => {
    const bytes = Buffer.concat([
      text('head line\n'.repeat(100)),
      Buffer.alloc(3_000),
      text('é tail line\n'.repeat(100)),
    ]);
    const whole = collect(bytes);
    for (const chunkSize of [1, 7, 511, 512, 513, 4_096]) expect(collect(bytes, chunkSize)).toEqual(whole);
    expect(whole.binaryBytes).toBe(3_000);
  });

  it('a megabyte-long line of \\u0001 control characters counts as binary, not as a million visible marks', () => {
    const bytes = Buffer.concat([Buffer.alloc(1_000_000, 0x01), text('\n')]);
    expect(collect(bytes)).toEqual({
      text: '[… 1,000,000 bytes of binary output not shown …]\n',
      binaryBytes: 1_000_000,
    });
  });

  it('random bytes (invalid UTF-8, controls) are binary; the closing message after them is kept', () => {
    const random = Buffer.from(Array.from({ length: 20_000 }, (_unused, i) => ((i * 2_654_435_761) >>> 13) & 0xff));
    const result = collect(Buffer.concat([random, text('\nexit: ok\n')]));
    // No noise before the marker; after it, the few printable bytes that ended the dump share
    // the closing line (they cannot be told from a message printed right after it, like `; echo ok`).
    expect(result.text).toMatch(/^\[… [\d,]+ bytes of binary output not shown …\]\n.{0,15}\nexit: ok\n$/);
    expect(result.binaryBytes).toBeGreaterThan(19_900);
  });

  it('text in a legacy encoding stays text: a few invalid bytes are shown as �, not summarised', () => {
    const latin1 = Buffer.from('café naïve résumé, déjà vu\n'.repeat(50), 'latin1');
    const result = collect(latin1);
    expect(result.binaryBytes).toBe(0);
    expect(result.text.split('\n')[0]).toBe('caf� na�ve r�sum�, d�j� vu');
  });

  it('UTF-8 text cut anywhere by the pipe comes out whole', () => {
    const emoji = '日本語のテキスト 😀 '.repeat(200);
    expect(collect(text(emoji), 5)).toEqual({ text: emoji, binaryBytes: 0 });
  });

  it('binary on two pipes is counted across both', () => {
    const output = new CommandOutput(20_000);
    const stdout = output.pipe();
    const stderr = output.pipe();
    stdout.write(Buffer.alloc(1_000));
    stderr.write(text('warning: binary file\n'));
    stdout.end();
    stderr.end();
    expect(output.finish()).toEqual({
      text: '[… 1,000 bytes of binary output not shown …]\nwarning: binary file\n',
      binaryBytes: 1_000,
    });
  });

  it('a long text output is still trimmed from the middle to the budget', () => {
    const lines = Array.from({ length: 20_000 }, (_unused, i) => `line ${i}\n`).join('');
    const result = collect(text(lines), 65_536, 2_000);
    expect(result.text.length).toBeLessThanOrEqual(2_000);
    expect(result.text).toMatch(/^line 0\n[\s\S]*characters cut from the middle[\s\S]*line 19999\n$/);
  });
});

describe('terminal text, for a reader that is not a terminal', () => {
  const clean = (value: string, chunk = value.length): string => {
    const terminal = new TerminalText();
    let out = '';
    for (let i = 0; i < value.length; i += chunk) out += terminal.write(value.slice(i, i + chunk));
    return out + terminal.flush();
  };

  it('drops colours, cursor moves, titles and hyperlinks, however the text is split', () => {
    const colored =
      '\x1b[1;31merror\x1b[0m: \x1b[38;5;208mexpected\x1b[m `;`\x1b[2K\x1b[1G\n' +
      '\x1b]0;window title\x07\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ \x1b(Bplain\x1b=\n';
    const expected = 'error: expected `;`\nlink plain\n';
    expect(clean(colored)).toBe(expected);
    for (const chunk of [1, 2, 3, 5]) expect(clean(colored, chunk)).toBe(expected);
  });

  it('turns carriage returns into line breaks (CR LF is one), so progress bars read as lines', () => {
    expect(clean('a\r\nb\rprogress 10%\rprogress 20%\r')).toBe('a\nb\nprogress 10%\nprogress 20%\n');
  });

  it('shows other control characters as visible pictures, one character each; keeps tab and newline', () => {
    expect(clean('bell\x07 back\bspace\tform\x0cfeed\x7f\x01\n')).toBe('bell␇ back␈space\tform␌feed␡␁\n');
  });

  it('shows an escape that starts no sequence, and does not let a broken one swallow the text', () => {
    expect(clean('a\x1b\x01b\x1b')).toBe('a␛␁b␛');
    expect(clean('\x1b]title never ends\nnext line\n')).toBe('\nnext line\n');
    expect(clean('\x1b[12\nkept\n')).toBe('\nkept\n');
  });

  it('is linear: a megabyte of escapes and controls is cleaned quickly', () => {
    const noisy = '\x1b[31mx\x1b[0m\x01\r'.repeat(100_000);
    let out = '';
    // CPU time, which a busy machine does not stretch as it does the clock.
    expect(cpuMsOf(() => (out = clean(noisy, 65_536)))).toBeLessThan(2_000);
    expect(out).toBe('x␁\n'.repeat(100_000));
  });
});
