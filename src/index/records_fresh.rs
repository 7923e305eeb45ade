//! The record cache brought up to date the way a command does it when it needs every day file
//! as it is now (`log`): a running MCP server's watcher, which hears the sessions folder, is
//! asked first; when it vouches, only the days the record itself moved, the journal's days and
//! the newest two are looked at; otherwise every day file is stat'ed (spec/index.md, "The
//! watcher's answer").

use super::entries::{EntriesRefresh, RecordSource, Scope};
use super::watcher::{self, NoAnswer};
use super::{Index, IndexError};

impl Index {
    /// [`Index::refresh_records`] over every day, unless a running watcher vouches for the
    /// sessions folder: it heard and applied every change made before the question, and this
    /// index holds its token for the record cache (read in the refresh's own transaction).
    /// `RUTTER_FRESHNESS_TRACE` says which answered.
    pub(crate) fn refresh_records_or_ask(
        &self,
        src: &dyn RecordSource,
    ) -> Result<EntriesRefresh, IndexError> {
        let current = match watcher::ask(&self.path, &self.root) {
            Ok(current) => current,
            Err(why) => {
                watcher::trace(&format_args!("full check ({why})"));
                return self.refresh_records(src, Scope::Full);
            }
        };
        let scope = Scope::Watched {
            token: &current.token,
            days: &[],
            claim: false,
        };
        let report = self.refresh_records(src, scope)?;
        match report.by_watcher {
            true => watcher::trace(&format_args!("watcher ({})", current.how)),
            false => watcher::trace(&format_args!("full check ({})", NoAnswer::OtherToken)),
        }
        Ok(report)
    }
}
