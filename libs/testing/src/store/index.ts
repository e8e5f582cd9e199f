export { MemoryStore } from './memory-store';
export { MemoryBlobs } from './memory-blobs';
export { MemoryLeases, MemorySandboxClaims } from './memory-coordination';
