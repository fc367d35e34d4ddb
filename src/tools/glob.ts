// Glob patterns for the search tool's file filter (`*.ts`, `src/**/*.test.ts`,
// `*.{js,mjs}`), compiled to regular expressions. Node 20 has no glob matcher of its own
// (`path.matchesGlob` arrived in 22).
//
// One idea, as in .gitignore: a pattern without a `/` matches a file's name wherever it
// is; a pattern with one matches the whole workspace-relative path.

export function globMatcher(glob: string): (relativePath: string) => boolean {
  const pattern = glob.trim().replace(/^\.\//, '');
  if (!pattern) throw new Error('the glob is empty');
  const regex = new RegExp(`^${globToRegExpSource(pattern)}$`);
  if (!pattern.includes('/'))
    return (relativePath) => regex.test(relativePath.slice(relativePath.lastIndexOf('/') + 1));
  return (relativePath) => regex.test(relativePath);
}

function globToRegExpSource(glob: string): string {
  let source = '';
  let braceDepth = 0;
  for (let i = 0; i < glob.length; i++) {
    const character = glob[i]!;
    switch (character) {
      case '*':
        if (glob[i + 1] === '*') {
          // `**/` is zero or more whole directories; a bare `**` is anything at all.
          if (glob[i + 2] === '/') {
            source += '(?:.*/)?';
            i += 2;
          } else {
            source += '.*';
            i += 1;
          }
        } else {
          source += '[^/]*';
        }
        break;
      case '?':
        source += '[^/]';
        break;
      case '[': {
        const close = glob.indexOf(']', i + 2);
        if (close < 0) {
          source += '\\[';
          break;
        }
        let body = glob.slice(i + 1, close);
        const negated = body.startsWith('!') || body.startsWith('^');
        if (negated) body = body.slice(1);
        source += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
        i = close;
        break;
      }
      case '{':
        braceDepth++;
        source += '(?:';
        break;
      case '}':
        if (braceDepth > 0) {
          braceDepth--;
          source += ')';
        } else {
          source += '\\}';
        }
        break;
      case ',':
        source += braceDepth > 0 ? '|' : ',';
        break;
      case '\\':
        // An escaped character is literal.
        if (i + 1 < glob.length) source += escapeRegExp(glob[++i]!);
        break;
      default:
        source += escapeRegExp(character);
    }
  }
  if (braceDepth > 0) throw new Error(`unbalanced braces in glob ${JSON.stringify(glob)}`);
  return source;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
