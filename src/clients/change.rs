//! What an install or uninstall does to one client file, as a verb and its object, so a report
//! says it as done ("registered the Stop hook …") and a dry run as a plan ("register the Stop
//! hook …") from the same value. A new kind of change picks its verb here, once.

/// The verbs of the changes install and uninstall make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Register,
    Write,
    Update,
    Replace,
    Add,
    Remove,
}

impl Verb {
    fn done(self) -> &'static str {
        match self {
            Verb::Register => "registered",
            Verb::Write => "wrote",
            Verb::Update => "updated",
            Verb::Replace => "replaced",
            Verb::Add => "added",
            Verb::Remove => "removed",
        }
    }

    fn planned(self) -> &'static str {
        match self {
            Verb::Register => "register",
            Verb::Write => "write",
            Verb::Update => "update",
            Verb::Replace => "replace",
            Verb::Add => "add",
            Verb::Remove => "remove",
        }
    }
}

/// One change to a file: a verb and what it acts on ("the MCP server `rutter` (`…`)").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    verb: Verb,
    object: String,
}

impl Change {
    pub(crate) fn new(verb: Verb, object: impl Into<String>) -> Self {
        Change {
            verb,
            object: object.into(),
        }
    }

    /// The change as done: "registered the MCP server …".
    pub(crate) fn done(&self) -> String {
        format!("{} {}", self.verb.done(), self.object)
    }

    /// The change as a plan: "register the MCP server …".
    pub(crate) fn planned(&self) -> String {
        format!("{} {}", self.verb.planned(), self.object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_said_as_done_or_as_planned() {
        let c = Change::new(Verb::Register, "the Stop hook `x`");
        assert_eq!(c.done(), "registered the Stop hook `x`");
        assert_eq!(c.planned(), "register the Stop hook `x`");
        for v in [
            Verb::Register,
            Verb::Write,
            Verb::Update,
            Verb::Replace,
            Verb::Add,
            Verb::Remove,
        ] {
            assert_ne!(v.done(), v.planned(), "{v:?}");
        }
    }
}
