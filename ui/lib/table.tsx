/**
 * A table's column headings, shared by the console and the portal: one `<th scope="col">`
 * a name, in order; a `false` name (a column the viewer may not see) is left out.
 */
export function ColumnHeads(props: { names: readonly (string | false)[] }) {
  return (
    <thead>
      <tr>{props.names.map((name) => (name === false ? null : <th scope="col">{name}</th>))}</tr>
    </thead>
  );
}
