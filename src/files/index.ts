// The files room: files people share reach the model, and the bot can hand files back.
export * from './transfer.js';
export { FileIntake } from './intake.js';
export { attachmentViewFor } from './attachment-view.js';
export { mediaPreparers } from './media-preparers.js';
export { attachFileTool } from './attach-file.js';
export { inputPreparer, removeThreadUploads, uploadPlace } from './conversation-files.js';
export { formatBytes } from './sizes.js';
