import { MemoryNumberStore } from './memory-number-store.ts';
import { numberStoreContract } from './number-store.contract.ts';

numberStoreContract('MemoryNumberStore', (options) => new MemoryNumberStore(options));
