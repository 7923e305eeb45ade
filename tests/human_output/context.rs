//! `git rutter context` (spec/context.md), in-process.

use super::two_sessions;

#[test]
fn context_brief_of_a_project() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["context", "--project", "myproj"]));
}
