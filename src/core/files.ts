// Files people share, and files the bot posts: the connectors register how their platform
// fetches and posts them (FileTransfers); the intake fetches a message's files when a turn
// takes it, within MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE and MAX_CONVERSATION_FILE_BYTES.
import type { Config } from '../config.js';
import type { EngineLogger } from '../engine/index.js';
import { FileIntake, FileTransfers, mediaPreparers } from '../files/index.js';
import { runAsWriterFor } from '../sandbox/run-as-writer.js';
import type { ShellStartup } from '../sandbox/shell-startup.js';

export interface CoreFiles {
  transfers: FileTransfers;
  intake: FileIntake;
}

export function filesFrom(config: Config, shell: ShellStartup, logger: EngineLogger): CoreFiles {
  const transfers = new FileTransfers();
  const runAs = shell.shell.kind === 'sandbox' ? shell.shell.sandbox.runAs : undefined;
  const intake = new FileIntake({
    transfers,
    maxFileBytes: config.MAX_FILE_BYTES,
    maxFilesPerMessage: config.MAX_FILES_PER_MESSAGE,
    maxConversationBytes: config.MAX_CONVERSATION_FILE_BYTES,
    // A root bot's uploads are made and written as its commands' user (src/sandbox/run-as-writer.ts).
    ...(runAs ? { writer: runAsWriterFor(runAs) } : {}),
    media: mediaPreparers({ maxImagePixels: config.MAX_IMAGE_PIXELS, pdfMaxMemoryMb: config.PDF_MAX_MEMORY_MB }),
    logger,
  });
  return { transfers, intake };
}
