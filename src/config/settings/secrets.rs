//! `secrets:` of `cfgctl.yaml`: where a secret field's `${file:…}` may read besides the
//! repository (`crate::util::file_ref`).

use serde_json::Value;

use super::Reader;

/// `secrets: {file_dirs: [DIR, ...]}`: the directories a secret field's `${file:…}` may read
/// under besides the repository (docs/product.md §2).
pub(super) fn file_dirs(r: &mut Reader<'_>, value: &Value) -> Vec<std::path::PathBuf> {
    let Some(map) = value.as_object() else {
        r.error(
            "/secrets",
            false,
            "`secrets` must be a mapping such as `{file_dirs: [/run/secrets]}`".into(),
        );
        return vec![];
    };
    let mut out = Vec::new();
    for (key, v) in map {
        let pointer = format!("/secrets/{}", crate::util::jsonpath::escape_pointer(key));
        if key != "file_dirs" {
            r.error(
                &pointer,
                true,
                format!("unknown field `secrets.{key}`; expected `file_dirs`"),
            );
            continue;
        }
        let Some(items) = v.as_array() else {
            r.error(
                &pointer,
                false,
                "`secrets.file_dirs` must be a list of directories".into(),
            );
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            match item.as_str().filter(|s| !s.is_empty()) {
                Some(dir) => out.push(dir.into()),
                None => r.error(
                    &format!("{pointer}/{i}"),
                    false,
                    format!("`secrets.file_dirs[{i}]` must be a directory path, found {item}"),
                ),
            }
        }
    }
    out
}
