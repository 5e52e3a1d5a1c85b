import { datasetOf } from './dataset.ts';
import { loadDataset } from './load-dataset.ts';

// Run in its own process: the embedded engine binds its data folder to one process at a time.
const [large, small] = process.argv.slice(2).map(Number);
await loadDataset(datasetOf(large!, small!), (line) => process.stdout.write(`${line}\n`));
