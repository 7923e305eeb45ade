//! The capture pipeline: from a Stop-hook payload to one appended, committed entry line.

pub mod directive;
pub mod refs;
pub mod sanitize;
pub mod transcript;
pub mod workspace;
