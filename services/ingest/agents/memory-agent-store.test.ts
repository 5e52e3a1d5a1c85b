import { agentStoreContract } from './agent-store.contract.ts';
import { MemoryAgentStore } from './memory-agent-store.ts';

agentStoreContract('MemoryAgentStore', () => new MemoryAgentStore());
