//! Git object names: [`ObjectId`], the 20-byte SHA-1 name of a commit, tree or blob, as every
//! layer above the git adapter holds one. It is our own type, not libgit2's (as gitoxide keeps
//! `gix-hash` apart from the rest), so no module but `store` sees git2; `store` alone converts
//! between the two.

use std::fmt;
use std::str::FromStr;

/// Bytes in a SHA-1 object name.
pub const LEN: usize = 20;
/// Hex digits in a whole SHA-1 object name.
pub const HEX_LEN: usize = 2 * LEN;

/// The name of a git object: 20 bytes, shown as 40 lowercase hex digits. Ordered by its bytes,
/// as git orders names.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId([u8; LEN]);

/// Why a text is not an object name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseObjectIdError {
    #[error("an object id has {HEX_LEN} hex digits, not {0}")]
    Length(usize),
    #[error("an object id is hex digits; {0:?} is not one")]
    NotHex(char),
}

impl ObjectId {
    /// The all-zero name git uses for "no object" (a ref's old value when it is created).
    pub const ZERO: ObjectId = ObjectId([0; LEN]);

    /// The name with these bytes.
    pub const fn from_bytes(bytes: [u8; LEN]) -> ObjectId {
        ObjectId(bytes)
    }

    /// The name held in `bytes` when they are exactly [`LEN`] long (a raw tree entry's name).
    pub fn from_slice(bytes: &[u8]) -> Option<ObjectId> {
        Some(ObjectId(bytes.try_into().ok()?))
    }

    /// Its bytes.
    pub const fn as_bytes(&self) -> &[u8; LEN] {
        &self.0
    }

    /// Whether it is [`ObjectId::ZERO`].
    pub fn is_zero(&self) -> bool {
        self.0 == [0; LEN]
    }

    /// A whole name from its [`HEX_LEN`] hex digits (either case).
    pub fn from_hex(hex: &str) -> Result<ObjectId, ParseObjectIdError> {
        if hex.len() != HEX_LEN {
            return Err(ParseObjectIdError::Length(hex.len()));
        }
        ObjectId::from_prefix(hex)
    }

    /// A name from 1 to [`HEX_LEN`] hex digits, the digits not given taken as zero: how libgit2
    /// reads a name (`git_oid_fromstrn`), so a shortened one names no object rather than
    /// being refused.
    pub fn from_prefix(hex: &str) -> Result<ObjectId, ParseObjectIdError> {
        if hex.is_empty() || hex.len() > HEX_LEN {
            return Err(ParseObjectIdError::Length(hex.len()));
        }
        let mut bytes = [0; LEN];
        for (i, c) in hex.chars().enumerate() {
            let nibble = c.to_digit(16).ok_or(ParseObjectIdError::NotHex(c))? as u8;
            bytes[i / 2] |= if i % 2 == 0 { nibble << 4 } else { nibble };
        }
        Ok(ObjectId(bytes))
    }

    /// Its 40 lowercase hex digits.
    fn hex(&self) -> [u8; HEX_LEN] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0; HEX_LEN];
        for (i, b) in self.0.iter().enumerate() {
            out[2 * i] = DIGITS[usize::from(b >> 4)];
            out[2 * i + 1] = DIGITS[usize::from(b & 0xf)];
        }
        out
    }
}

impl fmt::Display for ObjectId {
    /// The 40 hex digits; a precision cuts them (`{:.7}`), as for any text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.hex();
        // The digits are ASCII, so this never fails.
        f.pad(std::str::from_utf8(&hex).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for ObjectId {
    /// The hex digits alone, as libgit2's ids are shown in a debug print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for ObjectId {
    type Err = ParseObjectIdError;

    /// A whole name ([`ObjectId::from_hex`]).
    fn from_str(s: &str) -> Result<ObjectId, ParseObjectIdError> {
        ObjectId::from_hex(s)
    }
}

impl AsRef<[u8]> for ObjectId {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn a_name_reads_and_prints_as_its_hex_digits() {
        let id = ObjectId::from_hex(HEX).unwrap();
        assert_eq!(id.to_string(), HEX);
        assert_eq!(format!("{id:?}"), HEX);
        assert_eq!(format!("{id:.7}"), "0123456");
        assert_eq!(id.as_bytes()[..3], [0x01, 0x23, 0x45]);
        assert_eq!(HEX.to_uppercase().parse::<ObjectId>(), Ok(id));
        assert_eq!(ObjectId::from_slice(id.as_bytes()), Some(id));
        assert_eq!(ObjectId::from_slice(&id.as_bytes()[1..]), None);
        assert!(ObjectId::ZERO.is_zero() && !id.is_zero());
    }

    #[test]
    fn what_is_not_a_whole_name_is_refused_by_its_reason() {
        assert_eq!(
            ObjectId::from_hex("0123"),
            Err(ParseObjectIdError::Length(4))
        );
        assert_eq!(
            ObjectId::from_hex(&format!("{HEX}0")),
            Err(ParseObjectIdError::Length(41))
        );
        let g = format!("g{}", &HEX[1..]);
        assert_eq!(ObjectId::from_hex(&g), Err(ParseObjectIdError::NotHex('g')));
        assert_eq!(
            ObjectId::from_prefix(""),
            Err(ParseObjectIdError::Length(0))
        );
        // Multi-byte text is refused, never cut inside a character.
        assert!(ObjectId::from_hex(&"é".repeat(20)).is_err());
        assert!(ObjectId::from_prefix("é").is_err());
    }

    #[test]
    fn a_prefix_is_read_with_zeros_after_it_as_libgit2_reads_it() {
        let id = ObjectId::from_prefix("abc").unwrap();
        assert_eq!(id.to_string(), format!("abc{}", "0".repeat(37)));
    }

    proptest! {
        #[test]
        fn names_round_trip_and_order_as_their_hex(a in any::<[u8; LEN]>(), b in any::<[u8; LEN]>()) {
            let (x, y) = (ObjectId::from_bytes(a), ObjectId::from_bytes(b));
            prop_assert_eq!(x.to_string().parse::<ObjectId>(), Ok(x));
            prop_assert_eq!(x.cmp(&y), x.to_string().cmp(&y.to_string()));
        }
    }
}
