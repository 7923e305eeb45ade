//! Supersede: an entry that names the earlier entries it replaces (`supersedes`, spec/recall.md
//! "Supersede"). What a `supersedes` value may hold, and which entry each honoured claim marks
//! `superseded by`, a cycle included. Pure: the claims come from the record cache.

use super::Broken;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The most ids one entry may name.
pub(crate) const MAX_IDS: usize = 16;
/// The longest id one entry may name, in `char`s (an id is served at most this long).
pub(crate) const MAX_ID_CHARS: usize = 256;

/// Whether a list of named ids keeps the bounds: at most [`MAX_IDS`], each a non-empty string
/// of at most [`MAX_ID_CHARS`] characters. The error is one phrase (no capital, no period).
pub(crate) fn check(ids: &[String]) -> Result<(), Broken> {
    if ids.len() > MAX_IDS {
        return Err(format!(
            "a `supersedes` of {} ids, over the {MAX_IDS} an entry may name",
            ids.len()
        )
        .into());
    }
    for id in ids {
        if id.is_empty() {
            return Err("an empty id in `supersedes`".into());
        }
        if id.len() > MAX_ID_CHARS && id.chars().count() > MAX_ID_CHARS {
            return Err(format!(
                "an id in `supersedes` of {} characters, over the {MAX_ID_CHARS} an id may hold",
                id.chars().count()
            )
            .into());
        }
    }
    Ok(())
}

/// One honoured claim: the entry `by` (recorded, not retracted, stamped `time`) names `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claim {
    pub by: String,
    pub time: String,
    pub target: String,
}

/// Which entries are superseded, and by whom, from every honoured claim of the record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Supersession {
    /// Target id → the ids of the entries that supersede it, newest first.
    by: HashMap<String, Vec<String>>,
    /// `(by, target)` claims a cycle sets aside: the claim on the cycle's newest entry.
    set_aside: HashSet<(String, String)>,
}

/// What recall shows of one entry's supersede links.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Links {
    /// The entries that replace this one, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub superseded_by: Vec<String>,
    /// The ids this entry names that no entry has.
    #[serde(rename = "supersedes_unknown", skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<String>,
    /// The ids this entry names whose claim a cycle sets aside (that entry stays current).
    #[serde(rename = "supersedes_set_aside", skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<String>,
}

impl Links {
    pub fn is_empty(&self) -> bool {
        self.superseded_by.is_empty() && self.unresolved.is_empty() && self.set_aside.is_empty()
    }
}

impl Supersession {
    /// Resolves every claim. A claim marks its target unless the target supersedes its claimant
    /// back, directly or through others (a cycle): then, so that a cycle neither loops nor
    /// leaves every member superseded, the claim on the cycle's newest member (by time, then
    /// id) is set aside and that member is current; every other claim of the cycle holds.
    pub(crate) fn resolve(claims: &[Claim]) -> Supersession {
        let times: HashMap<&str, &str> = claims
            .iter()
            .map(|c| (c.by.as_str(), c.time.as_str()))
            .collect();
        let mut out = Supersession::default();
        for members in cycles(claims) {
            let newest = members
                .iter()
                .max_by_key(|id| (times.get(id.as_str()).copied().unwrap_or(""), id.as_str()));
            let Some(newest) = newest else { continue };
            for c in claims {
                if &c.target == newest && members.contains(&c.by) {
                    out.set_aside.insert((c.by.clone(), c.target.clone()));
                }
            }
        }
        let mut by: BTreeMap<&str, Vec<&Claim>> = BTreeMap::new();
        for c in claims {
            if c.by != c.target && !out.set_aside.contains(&(c.by.clone(), c.target.clone())) {
                by.entry(c.target.as_str()).or_default().push(c);
            }
        }
        for (target, mut cs) in by {
            cs.sort_by(|a, b| (&b.time, &b.by).cmp(&(&a.time, &a.by)));
            cs.dedup_by(|a, b| a.by == b.by);
            out.by.insert(
                target.to_string(),
                cs.into_iter().map(|c| c.by.clone()).collect(),
            );
        }
        out
    }

    /// Whether no entry is superseded.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.by.is_empty() && self.set_aside.is_empty()
    }

    /// The links of the entry `id` that names `named`; `exists` says whether an id names an
    /// entry of the record.
    pub(crate) fn links(&self, id: &str, named: &[String], exists: &dyn Fn(&str) -> bool) -> Links {
        let mut links = Links {
            superseded_by: self.by.get(id).cloned().unwrap_or_default(),
            ..Links::default()
        };
        for n in named {
            if self.set_aside.contains(&(id.to_string(), n.clone())) {
                links.set_aside.push(n.clone());
            } else if !exists(n) {
                links.unresolved.push(n.clone());
            }
        }
        links
    }
}

/// The members of every cycle of the claim graph (its strongly connected components of more
/// than one entry), found without recursion (Tarjan's algorithm, iteratively).
fn cycles(claims: &[Claim]) -> Vec<HashSet<String>> {
    let mut next: HashMap<&str, Vec<&str>> = HashMap::new();
    for c in claims.iter().filter(|c| c.by != c.target) {
        next.entry(c.by.as_str())
            .or_default()
            .push(c.target.as_str());
    }
    let mut order: HashMap<&str, (usize, usize)> = HashMap::new();
    let (mut stack, mut on_stack, mut out) = (Vec::new(), HashSet::new(), Vec::new());
    let mut counter = 0;
    let nodes: Vec<&str> = next.keys().copied().collect();
    for start in nodes {
        if order.contains_key(start) {
            continue;
        }
        let mut work: Vec<(&str, usize)> = vec![(start, 0)];
        while let Some(&(v, i)) = work.last() {
            if i == 0 {
                order.insert(v, (counter, counter));
                counter += 1;
                stack.push(v);
                on_stack.insert(v);
            }
            let succ = next.get(v).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&w) = succ.get(i) {
                if let Some(last) = work.last_mut() {
                    last.1 += 1;
                }
                if !order.contains_key(w) {
                    work.push((w, 0));
                } else if on_stack.contains(w) {
                    let low = order[v].1.min(order[w].0);
                    order.entry(v).and_modify(|o| o.1 = low);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                let low = order[parent].1.min(order[v].1);
                order.entry(parent).and_modify(|o| o.1 = low);
            }
            if order[v].0 == order[v].1 {
                let mut members = HashSet::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(w);
                    members.insert(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if members.len() > 1 {
                    out.push(members);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn claim(by: &str, time: &str, target: &str) -> Claim {
        Claim {
            by: by.into(),
            time: time.into(),
            target: target.into(),
        }
    }

    fn names(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bounds() {
        assert_eq!(check(&names(&["a"; MAX_IDS])), Ok(()));
        assert!(check(&names(&["a"; MAX_IDS + 1]))
            .unwrap_err()
            .contains("17 ids"));
        assert!(check(&names(&[""])).unwrap_err().contains("empty id"));
        assert_eq!(check(&["é".repeat(MAX_ID_CHARS)]), Ok(()));
        assert!(check(&["é".repeat(MAX_ID_CHARS + 1)])
            .unwrap_err()
            .contains("257 characters"));
    }

    #[test]
    fn a_claim_marks_its_target_and_names_that_do_not_resolve_are_kept() {
        let s = Supersession::resolve(&[
            claim("c", "3", "a"),
            claim("b", "2", "a"),
            claim("c", "3", "b"),
        ]);
        let exists = |id: &str| ["a", "b", "c"].contains(&id);
        assert_eq!(s.links("a", &[], &exists).superseded_by, names(&["c", "b"]));
        let c = s.links("c", &names(&["a", "b", "zz"]), &exists);
        assert_eq!(
            c,
            Links {
                superseded_by: vec![],
                unresolved: names(&["zz"]),
                set_aside: vec![],
            }
        );
        assert!(s.links("c", &[], &exists).is_empty());
        assert!(Supersession::resolve(&[]).is_empty());
    }

    /// A cycle never loops and never leaves every member superseded: its newest member stays
    /// current, and every other claim of it holds.
    #[test]
    fn a_cycle_keeps_its_newest_member_current() {
        let two = Supersession::resolve(&[claim("a", "1", "b"), claim("b", "2", "a")]);
        let any = |_: &str| true;
        assert_eq!(
            two.links("a", &names(&["b"]), &any).superseded_by,
            names(&["b"])
        );
        let b = two.links("b", &names(&["a"]), &any);
        assert!(b.superseded_by.is_empty());
        assert_eq!(
            two.links("a", &names(&["b"]), &any).set_aside,
            names(&["b"])
        );
        let three = Supersession::resolve(&[
            claim("a", "1", "b"),
            claim("b", "2", "c"),
            claim("c", "3", "a"),
            claim("d", "4", "c"),
        ]);
        assert_eq!(three.links("a", &[], &any).superseded_by, names(&["c"]));
        assert_eq!(three.links("b", &[], &any).superseded_by, names(&["a"]));
        assert_eq!(three.links("c", &[], &any).superseded_by, names(&["d"]));
        // An entry naming itself supersedes nothing.
        let own = Supersession::resolve(&[claim("a", "1", "a")]);
        assert!(own.links("a", &[], &any).superseded_by.is_empty());
    }

    proptest! {
        /// Whatever the claims, every cycle has a current member and the answer is the same
        /// whatever order the claims come in.
        #[test]
        fn every_cycle_has_a_current_member(
            edges in prop::collection::vec((0u8..6, 0u8..6), 0..20),
        ) {
            let claims: Vec<Claim> = edges
                .iter()
                .map(|(a, b)| claim(&a.to_string(), &format!("t{a}"), &b.to_string()))
                .collect();
            let s = Supersession::resolve(&claims);
            let mut reversed = claims.clone();
            reversed.reverse();
            prop_assert_eq!(&s, &Supersession::resolve(&reversed));
            for members in cycles(&claims) {
                let current = members
                    .iter()
                    .filter(|m| s.links(m, &[], &|_| true)
                        .superseded_by
                        .iter()
                        .all(|by| !members.contains(by)))
                    .count();
                prop_assert_eq!(current, 1, "{:?}", members);
            }
        }
    }
}
