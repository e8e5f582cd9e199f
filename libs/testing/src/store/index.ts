export { MemoryStore } from './memory-store';
