import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordJournal } from './journal.ts';

const folders: string[] = [];
function folder(): string {
  const made = mkdtempSync(path.join(tmpdir(), 'journal-'));
  folders.push(made);
  return made;
}
afterEach(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});

describe('RecordJournal', () => {
  it('gives concurrent appends consecutive positions, in order, and reads them back', async () => {
    const journal = await RecordJournal.open(folder());
    await Promise.all([journal.append(['a', 'b']), journal.append(['c']), journal.append(['d', 'e'])]);
    expect(journal.appended()).toBe(5);
    expect((await journal.read(1, 4)).map(({ seq, value }) => `${seq}:${value}`)).toEqual(['1:b', '2:c', '3:d']);
    await journal.close();
  });

  it('keeps what was appended and the round in flight across a reopen, and drops what was stored', async () => {
    const where = folder();
    const first = await RecordJournal.open(where);
    await first.append(['a', 'b', 'c', 'd']);
    await first.plan({ from: 0, to: 2, token: 't0' });
    await first.markStored(2);
    await first.plan({ from: 2, to: 4, token: 't1' });
    await first.close();

    const second = await RecordJournal.open(where);
    expect([second.id, second.stored(), second.appended(), second.planned()]).toEqual([
      first.id,
      2,
      4,
      { from: 2, to: 4, token: 't1' },
    ]);
    expect(await second.read(0, 4)).toEqual([
      { seq: 2, value: 'c' },
      { seq: 3, value: 'd' },
    ]);
    await second.markStored(4);
    await second.append(['e']);
    expect([second.appended(), second.planned()]).toEqual([5, null]);
    await second.close();
    // Positions go on from the stored ones even when no record is left.
    const third = await RecordJournal.open(where);
    expect([third.stored(), third.appended()]).toEqual([4, 5]);
    await third.close();
  });

  it('lets a reader through once what was appended before it is stored, or after its timeout', async () => {
    const journal = await RecordJournal.open(folder());
    await journal.append(['a', 'b']);
    const waiting = journal.caughtUp(5_000);
    await journal.append(['c']);
    await journal.markStored(1);
    let through = false;
    void waiting.then(() => (through = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(through).toBe(false);
    // Stored through 2: the reader waited for the two records before it, not for the third.
    await journal.markStored(2);
    expect(await waiting).toBe(true);
    expect(await journal.caughtUp(20)).toBe(false);
    await journal.close();
  });

  it("lets a tenant's reader through once its own records and those of no tenant are stored, not another's", async () => {
    const journal = await RecordJournal.open(folder());
    await journal.append(['a1', 'b1', 'shared', 'b2'], ['tenant-a', 'tenant-b', null, 'tenant-b']);
    await journal.markStored(1);
    // tenant-a's record is stored, but the record of no tenant (position 2) is not: its reader waits.
    let aThrough = false;
    const aWaiting = journal.caughtUp(5_000, 'tenant-a').then((caught) => (aThrough = caught));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(aThrough).toBe(false);
    await journal.markStored(3);
    expect(await aWaiting).toBe(true);
    // tenant-b's last record (position 3) is not stored: its reader and an unscoped one still wait.
    expect(await journal.caughtUp(20, 'tenant-b')).toBe(false);
    await journal.markStored(4);
    expect(await journal.caughtUp(5_000, 'tenant-b')).toBe(true);
    // Another tenant's appends never hold tenant-a's reader.
    await journal.append(['b3'], ['tenant-b']);
    expect(await journal.caughtUp(20, 'tenant-a')).toBe(true);
    expect(await journal.caughtUp(20)).toBe(false);
    await journal.close();
  });

  it('makes every reader wait for what a restart found unstored, whoever appended it', async () => {
    const where = folder();
    const first = await RecordJournal.open(where);
    await first.append(['a1'], ['tenant-a']);
    await first.close();
    const second = await RecordJournal.open(where);
    expect(await second.caughtUp(20, 'tenant-b')).toBe(false);
    await second.markStored(1);
    expect(await second.caughtUp(20, 'tenant-b')).toBe(true);
    await second.close();
  });

  it('tells each new journal apart by its id, so round tokens of a deleted journal never repeat', async () => {
    const a = await RecordJournal.open(folder());
    const b = await RecordJournal.open(folder());
    expect(a.id).not.toBe(b.id);
    await a.close();
    await b.close();
  });
  it('waits for a stalled writer once: after a wait runs out, reads answer at once until the writer stores again', async () => {
    const journal = await RecordJournal.open(folder());
    await journal.append(['a']);
    const started = Date.now();
    expect(await journal.caughtUp(300)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    // The same request's next read, and the requests behind it, do not wait the timeout again.
    const again = Date.now();
    expect(await journal.caughtUp(5_000)).toBe(false);
    expect(Date.now() - again).toBeLessThan(1_000);
    await journal.plan({ from: 0, to: 1, token: 't' });
    await journal.markStored(1);
    await journal.append(['b']);
    const waiting = journal.caughtUp(5_000);
    await journal.plan({ from: 1, to: 2, token: 't2' });
    await journal.markStored(2);
    expect(await waiting).toBe(true);
    await journal.close();
  });

  it('says why it refuses appends: a disk below the free-space floor, or a synced write that fails', async () => {
    const journal = await RecordJournal.open(folder());
    expect(await journal.refusal(0)).toBeNull();
    expect(await journal.refusal(Number.MAX_SAFE_INTEGER)).toMatch(
      /^the journal's disk has \d+ MB free, below \d+ MB$/,
    );
    await journal.append(['a']);
    journal.refuseWritesFor(60_000);
    expect(await journal.refusal(0)).toMatch(/^the journal refuses writes: ENOSPC/);
    await expect(journal.append(['b'])).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(journal.appended()).toBe(1);
    // The writer cannot mark what it stores meanwhile: a reader answers from what is stored at once.
    const started = Date.now();
    expect(await journal.caughtUp(5_000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    journal.refuseWritesFor(0);
    expect(await journal.refusal(0)).toBeNull();
    await journal.append(['b']);
    expect(journal.appended()).toBe(2);
    await journal.close();
  });
  // A real full disk needs a small file system of its own: a tmpfs, which only root may mount.
  it.skipIf(process.getuid?.() !== 0)(
    'on a real full disk refuses the append, says so below the free-space floor, and appends again once space is freed',
    async () => {
      const mount = folder();
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mount]);
      try {
        const journal = await RecordJournal.open(path.join(mount, 'journal'));
        await journal.append(['a']);
        expect(await journal.refusal(1_048_576)).toBeNull();
        const filler = path.join(mount, 'filler');
        try {
          writeFileSync(filler, Buffer.alloc(8 * 1_048_576));
        } catch {
          // Filled to the last byte: what a full disk is.
        }
        // A write of a few bytes may still fit a page the log holds: the floor is what sees a full disk.
        expect(await journal.refusal(1_048_576)).toMatch(/^the journal's disk has 0 MB free/);
        await expect(journal.append(['b'.repeat(64 * 1024)])).rejects.toThrow(/No space left on device/);
        expect(journal.appended()).toBe(1);
        rmSync(filler);
        expect(await journal.refusal(1_048_576)).toBeNull();
        await journal.append(['c']);
        expect((await journal.read(0, journal.appended())).map(({ value }) => value)).toEqual(['a', 'c']);
        await journal.close();
      } finally {
        execFileSync('umount', [mount]);
      }
    },
  );
});
