//! Results tables as files: `<dir>/<table>.<column>.bin` holding a column's bytes in the one
//! encoding of `netmodel::records` (little-endian values, dtype by name), and
//! `<dir>/<table>.columns.json`, the manifest `[[column, dtype, categories|null], ...]` the
//! Python decoder (ccbench.results.schema) reads with them. The engine and the agents write
//! their tables this way.

use std::io::Write;
use std::path::Path;

use netmodel::records::Table;

/// Write one table's column files and manifest into `dir`.
pub fn write_table(dir: &Path, t: &Table) -> std::io::Result<()> {
    let mut manifest = vec![];
    for (name, col) in &t.cols {
        let mut f = std::fs::File::create(dir.join(format!("{}.{name}.bin", t.name)))?;
        f.write_all(&col.le_bytes())?;
        let d = col.dtype();
        manifest.push(serde_json::json!([name, d.name(), d.categories()]));
    }
    std::fs::write(dir.join(format!("{}.columns.json", t.name)), serde_json::Value::Array(manifest).to_string())
}
