/**
 * A table's column headings, shared by the console and the portal: one `<th scope="col">`
 * a name, in order; a `false` name (a column the viewer may not see) is left out, and a
 * heading that needs a word of explanation carries it as its title.
 */
export type ColumnHead = string | false | { name: string; title: string };

export function ColumnHeads(props: { names: readonly ColumnHead[] }) {
  return (
    <thead>
      <tr>
        {props.names.map((head) =>
          head === false ? null : typeof head === 'string' ? (
            <th scope="col">{head}</th>
          ) : (
            <th scope="col" title={head.title}>
              {head.name}
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}
