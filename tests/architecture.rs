//! Layering rules checked on the source itself (issue 11, item 7): libgit2 is used only inside
//! `src/store/`; every other module reaches git through the store's API. Test modules may use
//! git2 as an oracle (after their `#[cfg(test)]`).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn git2_is_used_only_inside_the_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "the walk found the sources");
    let mut offenders = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if rel.starts_with("store/") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("//") {
                continue;
            }
            if l.contains("git2::") || l.starts_with("use git2") {
                offenders.push(format!("src/{rel}:{}: {l}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "git2 outside src/store/:\n{}",
        offenders.join("\n")
    );
}
