//! The disposable index (the only module that touches rusqlite).

pub mod frontmatter;
pub mod walk;
