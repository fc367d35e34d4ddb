// The helper process a root bot writes files through (run-as-writer.ts starts it as the
// commands' run-as user): the same walk and the same calls as the in-process writer
// (src/tools/folder-writer.ts, src/tools/pinned-folder.ts), done as that user, so the kernel
// itself keeps every write where that user may write. CommonJS run with `node -e`, like the
// other helpers' sources (a .ts file would need tsx's loader under vitest, another path once
// built).
//
// Requests come on stdin as frames: a 4-byte length of a JSON header, a 4-byte length of the
// bytes that follow it (a write's data), the header, the bytes. Each gets one JSON line on
// stdout, in order: `{ seq, ok: true, … }` or `{ seq, ok: false, code, message }`. Everything
// is synchronous: one request at a time, in the order sent.
import { MAX_UNIQUE_NAMES } from '../tools/folder-writer.js';

export const RUN_AS_WRITER_SOURCE = String.raw`
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;
const DIRECTORY = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const CREATE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK;
const WRITE = O_WRONLY | O_NOFOLLOW | O_NONBLOCK;
const MAX_NAMES = ${MAX_UNIQUE_NAMES};
const files = new Map();
let nextId = 1;

function failure(code, message, extra) {
  const error = new Error(message);
  error.code = code;
  error.own = true;
  return Object.assign(error, extra || {});
}
function checkName(name) {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw failure('EBADNAME', 'not a single file name: ' + JSON.stringify(name));
  }
}
function entry(fd, name) {
  return '/proc/self/fd/' + fd + '/' + name;
}
function numbered(name, n) {
  if (n === 1) return name;
  const ext = path.extname(name);
  return (ext ? name.slice(0, -ext.length) : name) + '-' + n + ext;
}
function openFolder(root, steps, create) {
  steps.forEach(checkName);
  let fd = fs.openSync(root, DIRECTORY);
  try {
    if (fs.readlinkSync('/proc/self/fd/' + fd) !== root) throw failure('EROOT', root + ' is not where it was (a link leads there)');
    let shown = '';
    for (const step of steps) {
      const at = entry(fd, step);
      shown = shown ? shown + '/' + step : step;
      let next;
      // Made, then opened; made again if it went in between (a command may remove it).
      for (let attempt = 1; next === undefined; attempt++) {
        if (create) {
          try { fs.mkdirSync(at, 0o755); } catch (error) { if (error.code !== 'EEXIST') throw error; }
        }
        try {
          next = fs.openSync(at, DIRECTORY);
        } catch (error) {
          if (error.code === 'ENOTDIR' || error.code === 'ELOOP') throw failure('ENOTFOLDER', shown + ' is not a folder', { shown });
          if (!create || error.code !== 'ENOENT' || attempt >= 3) throw error;
        }
      }
      fs.closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}
function hold(dirFd, fd, name, created) {
  const stats = fs.fstatSync(fd);
  if (!stats.isFile()) {
    fs.closeSync(fd);
    throw failure('ENOTFILE', name + ' is not a regular file', { shown: name, kind: stats.isDirectory() ? 'directory' : 'special' });
  }
  const id = nextId++;
  files.set(id, { dirFd, fd, name, created, dev: stats.dev, ino: stats.ino, position: 0 });
  return { id, name, created, dev: stats.dev, ino: stats.ino, size: stats.size, nlink: stats.nlink };
}
function fileOf(id) {
  const file = files.get(id);
  if (!file) throw failure('EBADID', 'no such open file');
  return file;
}
function stillOurs(file, name) {
  try {
    const there = fs.lstatSync(entry(file.dirFd, name));
    return there.dev === file.dev && there.ino === file.ino;
  } catch {
    return false;
  }
}
function release(id, file) {
  files.delete(id);
  try { fs.closeSync(file.fd); } catch {}
  try { fs.closeSync(file.dirFd); } catch {}
}
function kindAt(dirFd, name) {
  try {
    const there = fs.lstatSync(entry(dirFd, name));
    if (there.isSymbolicLink()) return 'link';
    if (there.isDirectory()) return 'directory';
    if (!there.isFile()) return 'special';
  } catch {}
  return null;
}

const ops = {
  folder(request) {
    fs.closeSync(openFolder(request.root, request.steps, true));
    return {};
  },
  create(request) {
    checkName(request.name);
    const dirFd = openFolder(request.root, request.steps, true);
    try {
      for (let n = 1; n <= MAX_NAMES; n++) {
        const candidate = numbered(request.name, n);
        let fd;
        try {
          fd = fs.openSync(entry(dirFd, candidate), CREATE, 0o644);
        } catch (error) {
          if (error.code === 'EEXIST') continue;
          throw error;
        }
        return hold(dirFd, fd, candidate, true);
      }
      throw failure('EMANY', 'a thousand files named like ' + request.name + ' are already here');
    } catch (error) {
      fs.closeSync(dirFd);
      throw error;
    }
  },
  open(request) {
    checkName(request.name);
    const dirFd = openFolder(request.root, request.steps, true);
    try {
      const at = entry(dirFd, request.name);
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          return hold(dirFd, fs.openSync(at, CREATE, 0o666), request.name, true);
        } catch (error) {
          if (error.code !== 'EEXIST') throw error;
        }
        const kind = kindAt(dirFd, request.name);
        if (kind) throw failure('ENOTFILE', request.name + ' is not a regular file', { shown: request.name, kind });
        try {
          return hold(dirFd, fs.openSync(at, WRITE), request.name, false);
        } catch (error) {
          if (error.code === 'ENOENT') continue;
          if (error.code === 'ELOOP') throw failure('ENOTFILE', request.name + ' is a symbolic link', { shown: request.name, kind: 'link' });
          if (error.code === 'EISDIR') throw failure('ENOTFILE', request.name + ' is a directory', { shown: request.name, kind: 'directory' });
          if (error.code === 'ENXIO') throw failure('ENOTFILE', request.name + ' is not a regular file', { shown: request.name, kind: 'special' });
          throw error;
        }
      }
      throw failure('EUNSTABLE', request.name + ' kept appearing and disappearing while it was being opened');
    } catch (error) {
      fs.closeSync(dirFd);
      throw error;
    }
  },
  write(request, bytes) {
    const file = fileOf(request.id);
    let written = 0;
    while (written < bytes.length) {
      const n = fs.writeSync(file.fd, bytes, written, bytes.length - written, file.position);
      written += n;
      file.position += n;
    }
    return {};
  },
  truncate(request) {
    const file = fileOf(request.id);
    fs.ftruncateSync(file.fd, 0);
    file.position = 0;
    return {};
  },
  rename(request) {
    const file = fileOf(request.id);
    checkName(request.name);
    if (!stillOurs(file, file.name)) throw failure('EREPLACED', file.name + ' was replaced while it was being saved');
    for (let n = 1; n <= MAX_NAMES; n++) {
      const candidate = numbered(request.name, n);
      if (candidate === file.name) return { name: candidate };
      try {
        fs.linkSync(entry(file.dirFd, file.name), entry(file.dirFd, candidate));
      } catch (error) {
        if (error.code === 'EEXIST') continue;
        throw error;
      }
      if (stillOurs(file, file.name)) {
        try { fs.unlinkSync(entry(file.dirFd, file.name)); } catch {}
      }
      file.name = candidate;
      return { name: candidate };
    }
    throw failure('EMANY', 'a thousand files named like ' + request.name + ' are already here');
  },
  close(request) {
    const file = fileOf(request.id);
    const size = fs.fstatSync(file.fd).size;
    release(request.id, file);
    return { size };
  },
  discard(request) {
    const file = files.get(request.id);
    if (!file) return {};
    if (file.created && stillOurs(file, file.name)) {
      try { fs.unlinkSync(entry(file.dirFd, file.name)); } catch {}
    }
    release(request.id, file);
    return {};
  },
};

function answer(header, bytes) {
  let reply;
  try {
    const op = ops[header.op];
    if (!op) throw failure('EBADOP', 'unknown request ' + header.op);
    reply = Object.assign({ seq: header.seq, ok: true }, op(header, bytes));
  } catch (error) {
    // A failure of ours says itself; a system call's message names /proc paths, so only its code goes.
    reply = { seq: header.seq, ok: false, code: error.code || 'EFAILED', message: error.own ? String(error.message) : '', shown: error.shown, kind: error.kind };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}

let buffered = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
  while (buffered.length >= 8) {
    const headerBytes = buffered.readUInt32BE(0);
    const dataBytes = buffered.readUInt32BE(4);
    if (buffered.length < 8 + headerBytes + dataBytes) break;
    const header = JSON.parse(buffered.subarray(8, 8 + headerBytes).toString('utf8'));
    const bytes = buffered.subarray(8 + headerBytes, 8 + headerBytes + dataBytes);
    buffered = buffered.subarray(8 + headerBytes + dataBytes);
    answer(header, bytes);
  }
});
process.stdin.on('end', () => process.exit(0));
`;
