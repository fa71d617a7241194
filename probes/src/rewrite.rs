//! Rewriting every string of a JSON value, object keys included: the one walker behind the
//! redaction of recordings (`host::RecordingHost`) and of reports (`gpu-doctor report --redact`).

use serde_json::Value;

/// Replaces every string in `value`, and every object key, with `f(field, text)`. `field` is the
/// name of the object field the string sits in (through any arrays), `None` at the top level and
/// for the keys themselves.
pub fn strings(value: &mut Value, f: &mut impl FnMut(Option<&str>, &str) -> String) {
    walk(value, None, f);
}

fn walk(value: &mut Value, field: Option<&str>, f: &mut impl FnMut(Option<&str>, &str) -> String) {
    match value {
        Value::String(s) => *s = f(field, s),
        Value::Array(items) => items.iter_mut().for_each(|i| walk(i, field, f)),
        Value::Object(map) => {
            let old = std::mem::take(map);
            for (k, mut v) in old {
                walk(&mut v, Some(&k), f);
                map.insert(f(None, &k), v);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_string_and_key_is_visited_with_its_field() {
        let mut v = json!({"a": "x", "list": ["y", {"b": "z"}], "n": 1, "t": true, "none": null});
        let mut seen = Vec::new();
        strings(&mut v, &mut |field, s| {
            seen.push(format!("{}={s}", field.unwrap_or("-")));
            s.to_uppercase()
        });
        assert_eq!(v, json!({"A": "X", "LIST": ["Y", {"B": "Z"}], "N": 1, "T": true, "NONE": null}));
        seen.sort();
        assert_eq!(seen, ["-=a", "-=b", "-=list", "-=n", "-=none", "-=t", "a=x", "b=z", "list=y"]);
    }
}
