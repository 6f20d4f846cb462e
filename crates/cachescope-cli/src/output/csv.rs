//! `--csv`: RFC 4180 fields, and records flattened from the JSON of `--json`.

/// CSV of `records` (JSON objects, e.g. the `points` of a command's `--json`): a header row,
/// then one row per record. Column names are the JSON field names, those of nested objects
/// joined with `_` (`"predicted": {"miss_ratio"}` → `predicted_miss_ratio`), in the order they
/// first appear; lists inside a record are left out (`--json` has them). A field a record
/// lacks, or a JSON `null`, is an empty cell.
pub fn csv_records(records: &[serde_json::Value]) -> String {
    let rows: Vec<Vec<(String, String)>> = records
        .iter()
        .map(|r| {
            let mut cells = Vec::new();
            flatten("", r, &mut cells);
            cells
        })
        .collect();
    let mut columns: Vec<&str> = Vec::new();
    for row in &rows {
        for (name, _) in row {
            if !columns.contains(&name.as_str()) {
                columns.push(name);
            }
        }
    }
    let mut out = columns
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for row in &rows {
        let line: Vec<String> = columns
            .iter()
            .map(|c| {
                row.iter()
                    .find(|(name, _)| name == c)
                    .map_or_else(String::new, |(_, v)| csv_field(v))
            })
            .collect();
        out += &line.join(",");
        out.push('\n');
    }
    out
}

/// The scalar fields of `v` as (column, text), nested objects prefixed with their name.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    let text = match v {
        Value::Object(map) => {
            for (k, child) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(&name, child, out);
            }
            return;
        }
        Value::Array(_) => return,
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
    };
    out.push((prefix.to_string(), text));
}

/// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn csv_flattens_nested_objects_and_quotes() {
        let rows = [
            json!({"program": "a,b.cst", "rate": 1.0, "predicted": {"miss_ratio": 0.5, "share": null}, "list": [1, 2]}),
            json!({"program": "say \"x\"", "rate": 2, "predicted": {"miss_ratio": 0.25}, "extra": true}),
        ];
        assert_eq!(
            super::csv_records(&rows),
            "program,rate,predicted_miss_ratio,predicted_share,extra\n\
             \"a,b.cst\",1.0,0.5,,\n\
             \"say \"\"x\"\"\",2,0.25,,true\n"
        );
        assert_eq!(super::csv_records(&[]), "\n");
    }
}
