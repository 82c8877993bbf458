/**
 * What is made from an object once per isolate and kept as long as the object is: the
 * settings are parsed once per env object, so what is made from them (the catalog, the
 * lease and resilience settings, the partner document, the MCP tools) is made once too.
 */

/** `make(key)`, made once per key object (a WeakMap: it goes with the key). */
export function oncePer<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const made = new WeakMap<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) {
      value = make(key);
      made.set(key, value);
    }
    return value;
  };
}
