export { MemoryStore } from './memory-store';
export { MemoryBlobs } from './memory-blobs';
