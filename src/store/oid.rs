//! The one crossing between our [`ObjectId`] and libgit2's `git2::Oid`. Everything the store
//! hands out or takes names objects by [`ObjectId`]; a store file converts only where it calls
//! libgit2, with [`ToGit::to_git`] and [`ToId::to_id`], which no module outside the store can reach.

use crate::objectid::ObjectId;

/// An [`ObjectId`] as libgit2 takes it.
pub(super) trait ToGit {
    fn to_git(self) -> git2::Oid;
}

impl ToGit for ObjectId {
    fn to_git(self) -> git2::Oid {
        // Twenty bytes always make a SHA-1 `Oid`; libgit2 refuses only another length.
        git2::Oid::from_bytes(self.as_bytes()).unwrap_or(git2::Oid::ZERO_SHA1)
    }
}

/// A libgit2 `Oid` as the layers above the store hold it.
pub(super) trait ToId {
    fn to_id(self) -> ObjectId;
}

impl ToId for git2::Oid {
    fn to_id(self) -> ObjectId {
        // Without libgit2's SHA-256 support (not built) every `Oid` is twenty bytes.
        ObjectId::from_slice(self.as_bytes()).unwrap_or(ObjectId::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_crosses_to_libgit2_and_back_unchanged() {
        let hex = "0123456789abcdef0123456789abcdef01234567";
        let ours = ObjectId::from_hex(hex).unwrap();
        let git = ours.to_git();
        assert_eq!(git, git2::Oid::from_str(hex).unwrap());
        assert_eq!(git.to_id(), ours);
        let blob = git2::Oid::hash_object(git2::ObjectType::Blob, b"x\n").unwrap();
        assert_eq!(blob.to_id().to_string(), blob.to_string());
    }
}
