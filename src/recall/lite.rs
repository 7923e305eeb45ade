//! An entry's JSON as the record cache serialised it, read for the renderings that stream the
//! whole record (`recent --all`, `timeline`): the fields they show, typed as `Entry` types
//! them (the cache's JSON is an `Entry` serialised, so what `Entry` reads this reads, and the
//! reverse), in borrowed strings rather than a whole `Entry` with its unknown fields.

use serde::de::IgnoredAny;
use serde::Deserialize;
use std::borrow::Cow;

#[derive(Deserialize)]
pub(crate) struct LiteEntry<'a> {
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    #[serde(borrow)]
    pub time: Cow<'a, str>,
    #[serde(borrow)]
    pub summary: Cow<'a, str>,
    #[serde(default, borrow)]
    pub refs: Vec<LiteRef<'a>>,
    #[serde(default, borrow)]
    pub workspace: Option<LiteWorkspace<'a>>,
    #[serde(default, borrow)]
    pub client: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(crate) struct LiteRef<'a> {
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    #[serde(borrow)]
    pub hash: Cow<'a, str>,
}

#[derive(Deserialize)]
pub(crate) struct LiteWorkspace<'a> {
    #[allow(dead_code)]
    cwd: IgnoredAny,
    #[serde(borrow)]
    pub project: Cow<'a, str>,
}
