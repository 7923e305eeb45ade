//! A rule of the record formats broken, as an error (issue 36, F9): what was read and the rule
//! it breaks, one clause a caller puts in its own message (`an entry line with {rule}`).

/// What was read and the rule it breaks (`a summary of 5000 characters, over the 4000 a
/// capture keeps`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Broken(String);

impl Broken {
    /// The rule said of what holds the text: `a retraction line with` + ` ` + the rule.
    pub(crate) fn within(self, what: &str) -> Broken {
        Broken(format!("{what} {}", self.0))
    }
}

impl From<String> for Broken {
    fn from(rule: String) -> Broken {
        Broken(rule)
    }
}

impl From<&str> for Broken {
    fn from(rule: &str) -> Broken {
        Broken(rule.to_string())
    }
}

/// The clause as text (what a finding or a refusal quotes).
impl std::ops::Deref for Broken {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}
