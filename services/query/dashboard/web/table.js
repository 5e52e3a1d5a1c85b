// @ts-check
import { h } from 'preact';
import htm from 'htm';

/**
 * @typedef {import('preact').ComponentChild} Child
 * @typedef {import('preact').ComponentChildren} Children
 */

const html = htm.bind(h);

/** An amount as the API sends it (a decimal string, never re-added as a float), or … until it has come. */
export const money = (/** @type {string | null | undefined} */ value) =>
  value === undefined || value === null ? '…' : `$${value}`;

/**
 * A table column: its header, a row's cell, and whether it holds numbers (right-aligned).
 * @template R
 * @typedef {{ label: string, value: (row: R) => Child, num: boolean }} Column
 */
/**
 * @template R
 * @param {string} label
 * @param {(row: R) => Child} value
 * @returns {Column<R>}
 */
export const column = (label, value, num = false) => ({ label, value, num });

/**
 * A table's rows and the columns that read them, typed together (the page's templates pass props untyped).
 * @template R
 * @param {R[]} rows
 * @param {Column<R>[]} columns
 */
export const tableOf = (rows, columns) => ({ rows, columns });

/**
 * @template R
 * @typedef {{ caption: string, columns: Column<R>[], rows: R[], testId: string, onRow?: (row: R) => void }} TableProps
 */
/**
 * @template R
 * @param {TableProps<R>} props
 */
export function Table({ caption, columns, rows, testId, onRow }) {
  return html`<div class="scroll" tabindex="0" role="region" aria-label=${caption}>
    <table data-testid=${testId}>
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col" class=${c.num ? 'num' : ''}>${c.label}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${
          rows.length === 0 &&
          html`<tr>
            <td colspan=${columns.length} class="muted">Nothing yet</td>
          </tr>`
        }
        ${rows.map(
          (row) =>
            html`<tr>
              ${columns.map((c, index) =>
                index === 0 && onRow
                  ? html`<td><button class="secondary" onClick=${() => onRow(row)}>${c.value(row)}</button></td>`
                  : html`<td class=${c.num ? 'num' : ''}>${c.value(row)}</td>`,
              )}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** A section of the page that is one table under its heading (`${name}-title`); what follows the table comes as children. */
/**
 * @template R
 * @param {TableProps<R> & { name: string, title: string, anchor?: string, children?: Children }} props
 */
export function TableSection({ name, title, anchor, children, ...table }) {
  return html`<section aria-labelledby=${`${name}-title`} id=${anchor}>
    <h2 id=${`${name}-title`}>${title}</h2>
    <${Table} ...${table} />
    ${children}
  </section>`;
}
