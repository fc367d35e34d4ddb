// A secret in the forms a tool prints it other than as written: base64 and base64url (alone
// and inside a longer blob), hex, percent-encoding in any case, broken by line breaks, cut in
// two across results, and arriving in pieces (a stream). Each is masked; ordinary text that
// only looks encoded is left as it was.
import { describe, expect, it } from 'vitest';
import { SecretMasker } from '../../src/secrets/index.js';
import { FRAGMENT_LENGTH, INNER_PIECE_LENGTH } from '../../src/secrets/secret-masker.js';

const SECRET = 'ghp-Secret~Token?8c2f1a>9e';
const masker = new SecretMasker([SECRET]);
const mask = masker.mask;
const bytes = Buffer.from(SECRET);

describe('base64 and base64url', () => {
  it('the value encoded alone, with and without padding, standard and URL alphabets', () => {
    expect(mask(`token: ${bytes.toString('base64')}`)).toBe('token: [secret]');
    expect(mask(`token: ${bytes.toString('base64url')}`)).toBe('token: [secret]');
  });

  it('inside a longer blob, at each of the three byte offsets: only the characters that mix in a neighbour are left', () => {
    for (const prefix of ['TOKEN=', 'TOKEN_=', 'TOKEN__=']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const blob = Buffer.from(`${prefix}${SECRET}\nNEXT=1\n`).toString(encoding);
        const masked = mask(blob);
        expect(masked, `${prefix} ${encoding}`).toContain('[secret]');
        // What is left around the mask encodes the neighbours and at most a few bits of the value.
        const [before, after] = masked.split('[secret]');
        expect(before!.length).toBeLessThanOrEqual(Math.ceil((prefix.length * 8) / 6) + 1);
        expect(after!.length).toBeLessThanOrEqual(Buffer.from('\nNEXT=1\n').toString(encoding).length + 2);
      }
    }
  });

  it('a long value wrapped at 76 characters, as `base64` prints it', () => {
    const long = 'sk-live-0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789';
    const wrapped = Buffer.from(long).toString('base64').replace(/.{76}/g, '$&\n');
    expect(wrapped).toContain('\n');
    expect(new SecretMasker([long]).mask(wrapped)).toBe('[secret]');
  });
});

describe('hex', () => {
  it('lower and upper case, as xxd -p and od print it', () => {
    expect(mask(bytes.toString('hex'))).toBe('[secret]');
    expect(mask(`0x${bytes.toString('hex').toUpperCase()}`)).toBe('0x[secret]');
    // xxd -p wraps at 60 characters.
    expect(mask(bytes.toString('hex').replace(/.{30}/g, '$&\n'))).toBe('[secret]');
  });
});

describe('percent-encoding', () => {
  it('%2D and %2d, every byte or only some, upper, lower or mixed', () => {
    expect(mask(`https://x.test/?t=${SECRET.replaceAll('-', '%2D')}`)).toBe('https://x.test/?t=[secret]');
    expect(mask(`https://x.test/?t=${SECRET.replaceAll('-', '%2d')}`)).toBe('https://x.test/?t=[secret]');
    expect(mask(encodeURIComponent(SECRET))).toBe('[secret]');
    const everyByte = [...bytes]
      .map((byte, i) => `%${byte.toString(16).padStart(2, '0')[i % 2 === 0 ? 'toUpperCase' : 'toLowerCase']()}`)
      .join('');
    expect(mask(`a=${everyByte}&b=2`)).toBe('a=[secret]&b=2');
  });

  it('a value with characters outside ASCII, encoded as UTF-8 bytes', () => {
    const umlaut = 'pässwörd-Geheim-42';
    expect(new SecretMasker([umlaut]).mask(`p=${encodeURIComponent(umlaut)}`)).toBe('p=[secret]');
    expect(new SecretMasker([umlaut]).mask(`p=${Buffer.from(umlaut).toString('base64')}`)).toBe('p=[secret]');
  });

  it('a value that holds a %XX of its own, percent-encoded again', () => {
    const value = 'p%40ss-w0rd-7';
    expect(new SecretMasker([value]).mask(`u=${encodeURIComponent(value)}`)).toBe('u=[secret]');
    expect(new SecretMasker([value]).mask(`u=${value}`)).toBe('u=[secret]');
  });
});

describe('UTF-16, reversed and ROT13', () => {
  const latin1 = (buffer: Buffer) => buffer.toString('latin1');
  const le = Buffer.from(SECRET, 'utf16le');
  const be = Buffer.from(le).swap16();

  it('UTF-16 little- and big-endian, with and without a byte-order mark, at an even or odd offset of a binary read as latin1', () => {
    for (const [name, encoded] of [
      ['LE', le],
      ['BE', be],
    ] as const) {
      const bom = name === 'LE' ? Buffer.from([0xff, 0xfe]) : Buffer.from([0xfe, 0xff]);
      for (const file of [
        encoded,
        Buffer.concat([bom, encoded]),
        Buffer.concat([Buffer.from([0x00, 0x07, 0x01]), encoded, Buffer.from([0x00])]),
      ]) {
        expect(mask(latin1(file)), name).toContain('[secret]');
        expect(mask(latin1(file)), name).not.toContain(latin1(encoded).slice(2, -2));
      }
    }
  });

  it('a value outside ASCII in UTF-16 too', () => {
    const umlaut = 'pässwörd-Geheim-42';
    expect(
      new SecretMasker([umlaut]).mask(
        latin1(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(umlaut, 'utf16le')])),
      ),
    ).toBe('ÿþ[secret]');
  });

  it('reversed (`rev`) and ROT13 (`tr A-Za-z N-ZA-Mn-za-m`)', () => {
    const reversed = [...SECRET].reverse().join('');
    const rot13 = SECRET.replace(/[A-Za-z]/g, (c) =>
      String.fromCharCode(((c.charCodeAt(0) - (c <= 'Z' ? 65 : 97) + 13) % 26) + (c <= 'Z' ? 65 : 97)),
    );
    expect(rot13).not.toBe(SECRET);
    expect(mask(`line: ${reversed}\n`)).toBe('line: [secret]\n');
    expect(mask(`line: ${rot13}\n`)).toBe('line: [secret]\n');
  });
});

describe('broken by a line break', () => {
  it('\\n, \\r\\n, indentation, a trailing backslash, and the JSON-escaped forms a tool result carries', () => {
    const [head, tail] = [SECRET.slice(0, 9), SECRET.slice(9)];
    expect(mask(`${head}\n${tail}`)).toBe('[secret]');
    expect(mask(`x ${head}\r\n    ${tail} y`)).toBe('x [secret] y');
    expect(mask(`${head} \\\n  ${tail}`)).toBe('[secret]');
    expect(mask(JSON.stringify({ output: `${head}\n${tail}\n` }))).toBe(JSON.stringify({ output: '[secret]\n' }));
    // Folded every 5 characters.
    expect(mask(SECRET.replace(/.{5}/g, '$&\n'))).toBe('[secret]');
  });
});

describe('cut in two across results', () => {
  it('a piece of 8 or more characters that starts or ends a secret is masked on its own', () => {
    expect(FRAGMENT_LENGTH).toBe(8);
    for (let cut = 8; cut <= SECRET.length - 8; cut++) {
      expect(mask(`out: ${SECRET.slice(0, cut)}\n`), `head ${cut}`).toBe('out: [secret]\n');
      expect(mask(`${SECRET.slice(cut)}\nexit 0`), `tail ${cut}`).toBe('[secret]\nexit 0');
    }
  });

  it('a piece of 12 or more from the middle is masked (`cut -c 5-16`), a longer one whole', () => {
    expect(INNER_PIECE_LENGTH).toBe(12);
    expect(mask(`|${SECRET.slice(4, 16)}|`)).toBe('|[secret]|');
    const long = 'sk-live-0123456789abcdefghijklmnopqrstuvwxyz';
    expect(new SecretMasker([long]).mask(`a ${long.slice(9, 39)} b`)).toBe('a [secret] b');
  });

  it('the limit: a shorter piece from the middle, or one under 8 at an edge, is not (see docs/security.md)', () => {
    expect(mask(SECRET.slice(0, 7))).toBe(SECRET.slice(0, 7));
    expect(mask(SECRET.slice(4, 15))).toBe(SECRET.slice(4, 15));
  });
});

describe('ordinary text is left alone', () => {
  it('other base64, hex, percent-escapes and line breaks', () => {
    const text = [
      'commit 3f786850e387550fdab836ed7e6dc881de23001b',
      `data: ${Buffer.from('nothing secret in here at all, just words').toString('base64')}`,
      'GET /search?q=hello%20world%2C%20again&lang=en',
      '  indented\n  lines\r\n\tand tabs \\',
      '100% sure, 50%-off, %zz and a trailing %',
    ].join('\n');
    expect(mask(text)).toBe(text);
  });

  it('a six-character secret masks its own forms, not words around them', () => {
    const short = new SecretMasker(['hunter']);
    expect(short.mask('the hunter went hunting; aHVudGVy; 68756e746572')).toBe(
      'the [secret] went hunting; [secret]; [secret]',
    );
    expect(short.mask('hunt\ner')).toBe('[secret]');
  });
});

describe('a stream masks a secret split across its pieces', () => {
  const text = `The key is ${SECRET}, and ${encodeURIComponent(SECRET).replaceAll('-', '%2d')} encoded; ${SECRET.slice(0, 10)}\n${SECRET.slice(10)} folded.`;

  it('cut at every place, and piece by piece: the same as the whole text masked, never the secret', () => {
    const whole = mask(text);
    expect(whole).toBe('The key is [secret], and [secret] encoded; [secret] folded.');
    for (let cut = 1; cut < text.length; cut++) {
      const stream = masker.streamMask();
      const shown = stream.push(text.slice(0, cut)) + stream.push(text.slice(cut)) + stream.end();
      expect(shown, `cut at ${cut}`).toBe(whole);
    }
    const stream = masker.streamMask();
    const pieces = [...text].map((char) => stream.push(char));
    pieces.push(stream.end());
    expect(pieces.join('')).toBe(whole);
  });

  it('ordinary text is hardly held back: a character or two that could start a secret, and a trailing blank', () => {
    const stream = masker.streamMask();
    const text = 'The quick brown fox jumps over the lazy dog, again and again. Some code: `const x = 42;` to read.';
    let pushed = 0;
    let shown = 0;
    for (const char of text) {
      pushed += 1;
      shown += stream.push(char).length;
      expect(pushed - shown, `after ${pushed} characters`).toBeLessThanOrEqual(3);
    }
    expect(shown + stream.end().length).toBe(text.length);
  });

  it('an unfinished %X waits for the next piece; blanks wait only after what could start a secret', () => {
    const stream = masker.streamMask();
    expect(stream.push('ok %2')).toBe('ok ');
    expect(stream.push('0 go!\n')).toBe('%20 go!\n');
    expect(stream.push(`then ${SECRET.slice(0, 5)} `)).toBe('then ');
    expect(stream.push(`\n  ${SECRET.slice(5)} end`) + stream.end()).toBe('[secret] end');
  });

  it('a delta that ends a word shows it whole, unless its last characters could start the secret as written', () => {
    // Every letter starts some encoded form or inner piece: those are held from three characters on.
    expect(masker.streamMask().push('Thinker')).toBe('Thinker');
    // The secret starts with `g`.
    expect(masker.streamMask().push('Thinking')).toBe('Thinkin');
  });

  it('a secret not yet whole when the stream ends: its start is masked if long enough', () => {
    const stream = masker.streamMask();
    const shown = stream.push(`key ${SECRET.slice(0, 12)}`) + stream.end();
    expect(shown).toBe('key [secret]');
  });
});

describe('one pass, whatever the number of secrets', () => {
  it('twenty secrets in a 20 KB result, each in several forms, are all found', () => {
    const secrets = Array.from({ length: 20 }, (_, i) => `secret-${i}-${(i * 7919).toString(36)}-value-${i}`);
    const many = new SecretMasker(secrets);
    const lines: string[] = [];
    for (let i = 0; lines.join('\n').length < 20_000; i++) {
      const secret = secrets[i % secrets.length]!;
      const form = [
        secret,
        Buffer.from(secret).toString('base64'),
        Buffer.from(secret).toString('hex'),
        secret.replaceAll('-', '%2D'),
      ][i % 4]!;
      lines.push(`line ${i}: some ordinary output ${form} more text`);
    }
    const masked = many.mask(lines.join('\n'));
    expect(masked.split('\n').every((line) => /^line \d+: some ordinary output \[secret\] more text$/.test(line))).toBe(
      true,
    );
  });
});
