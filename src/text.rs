//! Pieces of messages shared by every layer.

/// Names for a message: `'a', 'b', 'c'`.
pub fn quoted_list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|name| format!("'{}'", name.as_ref())).collect();
    quoted.join(", ")
}
